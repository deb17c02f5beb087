package streamctl.planner

import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.chooser.ChooserState
import streamctl.control.{ControlState, ControlResults, SspControlStates}
import streamctl.dataloss.{DataLoss, StreamIds}
import streamctl.grouper.{GroupingState, TaskMapping}
import streamctl.locality.TaskLocalityStore
import streamctl.metadata.{FileSystemMetadataStore, StoreLayout}
import streamctl.startpoint.{AppliedStartpoints, Startpoint}
import streamctl.system.{SSP, TaskName}

/**
 * The checkpoint written by streamctl at commit 08f2737 (tests/data/checkpoint-08f2737, see its
 * README) reads into today's typed state, and today's compact form (offset version 2) of that state
 * reads back to the same state. tests/test_checkpoint_compatibility.py restarts a query from it.
 */
class CheckpointCompatibilityTest {
  private val dir: Path =
    Paths.get(sys.props.getOrElse("basedir", "."), "tests", "data", "checkpoint-08f2737")
  private def orders(p: Int) = SSP.kafka("ckpt-orders", p)
  private val ref = SSP.kafka("ckpt-ref", 0)
  private val mid = Seq(SSP.kafka("ckpt-mid", 0), SSP.kafka("ckpt-mid", 1))

  /**
   * The streamctl offset in each file of the offset log (version, metadata, then one line per
   * source), by batch.
   */
  private val logged: Seq[(Int, String)] =
    Files.list(
      dir.resolve("offsets")
    ).iterator().asScala.map(_.getFileName.toString).filter(_.forall(_.isDigit))
      .map(_.toInt).toSeq.sorted.map(b =>
        b -> Files.readAllLines(dir.resolve("offsets").resolve(b.toString)).get(2)
      )

  @Test def everyLoggedOffsetParsesAndRoundTripsInTodaysForm(): Unit = {
    assertEquals(15, logged.size)
    logged.foreach { case (batch, json) =>
      val read = SourceStates.parse(json)
      assertEquals(read, SourceStates.parse(read.json), s"batch $batch")
      assertTrue(read.json.length < json.length, s"batch $batch: ${read.json}")
    }
    val initial =
      new String(Files.readAllBytes(dir.resolve("sources/0/streamctl/initial-offset.json")))
    assertEquals(SourceStates.parse(initial), SourceStates.parse(SourceStates.parse(initial).json))
  }

  @Test def everyKindOfStateReadsAsTypedState(): Unit = {
    val positions = logged.toMap.map { case (b, json) => b -> SourceStates.parse(json) }
    val last = positions(14)
    assertEquals(
      Map("ckpt-mid" -> 2, "ckpt-orders" -> 2, "ckpt-ref" -> 1),
      last.state(GroupingState.Codec).initialPartitionCounts
    )
    assertEquals(
      Map(orders(2) -> Map(orders(0) -> 27L), orders(3) -> Map(orders(1) -> 27L)),
      positions(4).state(GroupingState.Codec).holds
    )
    assertEquals(
      Map(
        TaskName("Partition 0") -> Map(orders(2) -> 0L),
        TaskName("Partition 1") -> Map(orders(3) -> 0L)
      ),
      positions(4).starts
    )
    assertEquals(Map(ref -> 5L), last.state(ChooserState.Codec).bootstrapHeads)
    assertEquals(Some(1700000000308L), last.state(ChooserState.Codec).frontier)
    val applied = positions(11).state(AppliedStartpoints.Codec).applied
    assertEquals(Set((orders(1), TaskName("Partition 1"))), applied.keySet)
    assertEquals(3L, applied.values.head.offset)
    assertTrue(applied.values.head.startpoint.isInstanceOf[Startpoint.Specific])
    assertEquals(Some(15L), last.state.get(ControlState.Codec).map(_.seq))
    mid.foreach { s =>
      val st = last.state.get(ControlState.Codec).get.states(s)
      assertEquals(
        (2, 1, Set("p1")),
        (st.producerCount, st.endOfStreamCount, st.idleProducers.toSet)
      )
      assertEquals(Some(1700000000009L), st.watermark)
    }
    assertEquals(2L, last.state(DataLoss.Codec).recordsSkipped)
    assertEquals(Set("ckpt-orders", "ckpt-ref", "ckpt-mid"), last.state(StreamIds.Codec).ids.keySet)
    assertEquals(
      Map(
        TaskName("Partition 0") -> Set(orders(0), orders(2), ref, mid(0)),
        TaskName("Partition 1") -> Set(orders(1), orders(3), ref, mid(1))
      ),
      last.tasks.map { case (t, ps) => t -> ps.keySet }
    )
  }

  @Test def theMetadataStoreReadsToo(): Unit = {
    val store =
      new FileSystemMetadataStore(dir.resolve("streamctl").toString, new Configuration(false))
    val keys = StoreLayout.Source("0")
    val mapping =
      TaskMapping.fromJson(store.get(StoreLayout.MappingNamespace, keys.mappingKey).get, "test")
    assertEquals(Set(orders(0), orders(1), orders(2), orders(3), ref) ++ mid, mapping.ssps)
    assertTrue(new TaskLocalityStore(store, keys.localityKey).load().placement.isEmpty)
    // The control results of the last batch, which the next planning merges: p1 came back at +10.
    val pending = new ControlResults(store, keys.controlNamespace).load(15)
    assertEquals(Seq("Partition 0", "Partition 1"), pending.map(_._1).sorted)
    val logged15 = SourceStates.parse(logged.last._2).state(ControlState.Codec)
    val merged = SspControlStates.merge(logged15.states +: pending.map(_._2))
    mid.foreach(s => assertEquals(Some(1700000000010L), merged(s).watermark))
  }
}
