package streamctl.system

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.startpoint.FakeSystemAdmin

class SubscriptionTest {

  @Test def aPatternReadsEveryTopicWithAMatchInItsNameAsSparksKafkaSourceDoes(): Unit = {
    val admin = new FakeSystemAdmin
    Seq("orders", "orders-eu", "backorders", "rates").foreach(s =>
      admin.add(SSP.kafka(s, 0), 0, Nil)
    )
    assertEquals(
      Seq("backorders", "orders", "orders-eu"),
      Subscription.parsePattern("subscribePattern", "orders").streams(admin)
    )
    assertEquals(
      Seq("orders"),
      Subscription.parsePattern("subscribePattern", "^orders$").streams(admin)
    )
  }
}
