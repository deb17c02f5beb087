package streamctl.system

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException

class KafkaParamsTest {
  private def params(extra: (String, String)*) =
    KafkaParams(Map("bootstrap.servers" -> "127.0.0.1:9092") ++ extra)

  private def refused(extra: (String, String)*): String =
    assertThrows(classOf[StreamctlException], () => { params(extra: _*); () }).getMessage

  @Test def aValueStreamctlReadsIsCheckedNamingTheOption(): Unit = {
    assertEquals(
      "Option 'kafka.default.api.timeout.ms': Invalid value abc for configuration default.api.timeout.ms: " +
        "Not a number of type INT",
      refused("default.api.timeout.ms" -> "abc")
    )
    assertEquals(
      "Option 'kafka.default.api.timeout.ms' must be a positive number of milliseconds, not '0'",
      refused("default.api.timeout.ms" -> "0")
    )
    assertTrue(refused(
      "delivery.timeout.ms" -> "soon"
    ).startsWith("Option 'kafka.delivery.timeout.ms': Invalid value soon"))
  }

  @Test def boundedReadersLetTheBrokerHoldAFetchBrieflyUnlessTheUserSaysOtherwise(): Unit = {
    val wait = "fetch.max.wait.ms"
    assertEquals("10", params().forBoundedReads.consumer.get(wait))
    assertNull(params().consumer.get(wait)) // real-time readers: Kafka's default
    assertEquals("250", params(wait -> "250").forBoundedReads.consumer.get(wait))
    // Consumers of the two kinds are pooled apart.
    assertNotEquals(params().cacheKey, params().forBoundedReads.cacheKey)
  }

  @Test def everyOtherValueGoesThroughKafkasOwnParser(): Unit = {
    assertEquals(
      "Option 'kafka.acks': Invalid value maybe for configuration acks: String must be one of: all, -1, 0, 1; " +
        "Option 'kafka.fetch.max.bytes': Invalid value -1 for configuration fetch.max.bytes: Value must be at least 0",
      refused("acks" -> "maybe", "fetch.max.bytes" -> "-1")
    )
    assertTrue(refused(
      "security.protocol" -> "PLAIN"
    ).startsWith("Option 'kafka.security.protocol': Invalid value PLAIN"))
    // Settings no client knows belong to plugins: passed on, as Kafka does.
    assertEquals("x", params("my.plugin.setting" -> "x").consumer.get("my.plugin.setting"))
  }

  @Test def everyWaitDerivesFromTheApiTimeout(): Unit = {
    val default = params()
    assertEquals(
      BrokerWait("127.0.0.1:9092", 60000, "kafka.default.api.timeout.ms"),
      default.apiWait
    )
    assertEquals(
      BrokerWait("127.0.0.1:9092", 60000, "kafka.default.api.timeout.ms"),
      default.deliveryWait
    )
    assertEquals("60000", default.producer.get("max.block.ms"))
    assertEquals("60000", default.producer.get("delivery.timeout.ms"))
    assertEquals("60000", default.consumer.get("default.api.timeout.ms"))

    /* Kafka refuses a delivery timeout under linger.ms + request.timeout.ms: a short wait is
     * rounded up to it. */
    val short = params("default.api.timeout.ms" -> "3000", "linger.ms" -> "20")
    assertEquals("3000", short.producer.get("request.timeout.ms"))
    assertEquals(3020L, short.deliveryTimeoutMs)
    assertEquals("3000", short.admin.get("request.timeout.ms"))

    val own = params("delivery.timeout.ms" -> "90000")
    assertEquals(BrokerWait("127.0.0.1:9092", 90000, "kafka.delivery.timeout.ms"), own.deliveryWait)
  }

  @Test def theAdminClientKeepsTheUsersRequestTimeout(): Unit = {
    val own = params("request.timeout.ms" -> "45000").admin
    assertEquals("45000", own.get("request.timeout.ms"))
    assertEquals("60000", own.get("default.api.timeout.ms"))
    assertEquals("30000", params().admin.get("request.timeout.ms")) // Kafka's default, when none
    // Over the API timeout, which streamctl always sets, the admin client would refuse it.
    val longer = params("request.timeout.ms" -> "90000")
    assertEquals("60000", longer.admin.get("request.timeout.ms"))
    assertEquals("90000", longer.producer.get("request.timeout.ms"))
    Seq(own, longer.admin).foreach(settings => // Kafka takes both (it connects only when asked)
      org.apache.kafka.clients.admin.Admin.create(settings).close(java.time.Duration.ZERO)
    )
    assertEquals(
      "90000",
      params("request.timeout.ms" -> "90000", "default.api.timeout.ms" -> "120000").admin.get(
        "request.timeout.ms"
      )
    )
  }

  @Test def aWaitExceededNamesServersWhatAndTheOption(): Unit = {
    val e =
      params("default.api.timeout.ms" -> "3000").apiWait.exceeded("listing offsets of orders-0")
    assertEquals(
      "Kafka at 127.0.0.1:9092 did not answer within 3000 ms while listing offsets of orders-0 (is the broker up? " +
        "check option 'kafka.bootstrap.servers'; option 'kafka.default.api.timeout.ms' sets this wait)",
      e.getMessage
    )
    val send = params().sendFailed(
      "writing to stream 'mid'",
      new org.apache.kafka.common.errors.TimeoutException("Expiring 3 record(s)")
    )
    assertTrue(
      send.getMessage.startsWith(
        "Kafka at 127.0.0.1:9092 did not answer within 60000 ms while writing to stream " +
          "'mid': Expiring 3 record(s) ("
      ),
      send.getMessage
    )
  }

  @Test def anUnresolvableHostIsNamedWithKafkasCause(): Unit = {
    val p = KafkaParams(Map("bootstrap.servers" -> "127.0.0.1:9092,no-such-host.invalid:9092"))
    val e = assertThrows(
      classOf[StreamctlException],
      () => {
        p.newClient("admin client")(throw new org.apache.kafka.common.KafkaException(
          "Failed to create new KafkaAdminClient",
          new org.apache.kafka.common.config.ConfigException(
            "No resolvable bootstrap urls given in bootstrap.servers"
          )
        ))
        ()
      }
    )
    assertEquals(
      "Cannot create a Kafka admin client for 127.0.0.1:9092,no-such-host.invalid:9092: Failed to create new " +
        "KafkaAdminClient: No resolvable bootstrap urls given in bootstrap.servers (host 'no-such-host.invalid' does not " +
        "resolve; check option 'kafka.bootstrap.servers')",
      e.getMessage
    )
  }

  @Test def settingsStreamctlManagesAndAMissingServerListAreRefused(): Unit = {
    assertTrue(refused(
      "enable.auto.commit" -> "true"
    ).contains("'kafka.enable.auto.commit' is not supported"))
    val e = assertThrows(
      classOf[StreamctlException],
      () => { KafkaParams(Map("bootstrap.servers" -> " ")); () }
    )
    assertTrue(e.getMessage.contains("'kafka.bootstrap.servers' is required"), e.getMessage)
  }
}
