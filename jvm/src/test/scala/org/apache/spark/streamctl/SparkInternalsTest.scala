package org.apache.spark.streamctl

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class SparkInternalsTest {
  @Test def anInternalThatMovedReadsAsNone(): Unit = {
    // What a Spark without the method or class this jar was compiled against throws.
    assertEquals(None, SparkInternals.read[Int](throw new NoSuchMethodError("lastExecution")))
    assertEquals(None, SparkInternals.read[Int](throw new NoClassDefFoundError("StreamExecution")))
    assertEquals(None, SparkInternals.read[Int](throw new IllegalStateException("not started")))
    assertEquals(Some(7), SparkInternals.read(Some(7)))
  }

  @Test def anInterruptIsNotSwallowed(): Unit = {
    assertThrows(
      classOf[InterruptedException],
      () => { SparkInternals.read[Int](throw new InterruptedException()); () }
    )
    ()
  }
}
