package streamctl.spark

import org.apache.spark.SparkThrowable
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException

/** With Spark's jars there, every streamctl error is a Spark error carrying its condition. */
class SparkStreamctlExceptionTest {

  @Test def anErrorMadeWhereSparkRunsIsASparkErrorWithItsCondition(): Unit = {
    val e = StreamctlException("Option 'subscribe' names no stream")
    assertTrue(e.isInstanceOf[SparkThrowable], e.getClass.getName)
    assertEquals(StreamctlException.Error, e.asInstanceOf[SparkThrowable].getCondition)
    assertEquals("Option 'subscribe' names no stream", e.getMessage)
  }

  @Test def aConditionAndItsParametersSurviveBeingMadeAgain(): Unit = {
    val first = StreamctlException("gone", null, "STREAMCTL_TEST", Map("stream" -> "orders"))
    val cause = new RuntimeException("Job aborted", first)
    val again = StreamctlException.in(cause).map(s =>
      StreamctlException(s.getMessage, cause, s.condition, s.parameters)
    ).get
    val spark = again.asInstanceOf[SparkThrowable]
    assertEquals("STREAMCTL_TEST", spark.getCondition)
    assertEquals(java.util.Map.of("stream", "orders"), spark.getMessageParameters)
    assertSame(cause, again.getCause)
  }
}
