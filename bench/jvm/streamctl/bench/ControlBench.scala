package streamctl.bench

import streamctl.control.{ControlState, _}
import streamctl.system.{Envelope, SSP, SspRange, TaskName}

/**
 * Cost of in-band control on the reader: per user record (100-byte payloads) and per
 * control message. A plain nanoTime harness: warm-up rounds, then the median of timed
 * rounds. Figures are indicative only (JIT, 2 shared cores); no assertions.
 *
 * {{{
 * ControlBench.main(Array())          // default sizes
 * ControlBench.main(Array("5000000")) // user records per round
 * }}}
 */
object ControlBench {
  private val Rounds = 7
  private val Warmups = 3
  private var sink = 0L
  private val NoHeaders = Array.empty[org.apache.kafka.common.header.Header] // consumed results, printed so the JIT cannot drop the work

  def main(args: Array[String]): Unit = {
    val records = args.headOption.map(_.toInt).getOrElse(2000000)
    val controls = math.max(records / 20, 10000)
    println(s"ControlBench: java ${System.getProperty("java.version")}, ${Runtime.getRuntime.availableProcessors} cores, " +
      s"$records user records/round, $controls control messages/round, median of $Rounds rounds after $Warmups warm-ups")

    val ssp = SSP.kafka("mid", 0)
    val payloads = Array.tabulate(1024)(i => Array.tabulate[Byte](100)(j => (i + j).toByte))
    val framed = payloads.map(IntermediateMessage.frameUser)

    report("baseline: read first byte of an unframed 100 B value", records) { n =>
      var i = 0; var acc = 0L
      while (i < n) { acc += payloads(i & 1023)(0); i += 1 }
      acc
    }
    report("frameUser (producer side, one copy)", records) { n =>
      var i = 0; var acc = 0L
      while (i < n) { acc += IntermediateMessage.frameUser(payloads(i & 1023)).length; i += 1 }
      acc
    }
    val typeCheck = report("typeOf + offset view (no allocation)", records) { n =>
      var i = 0; var acc = 0L
      while (i < n) {
        val b = framed(i & 1023)
        if (IntermediateMessage.typeOf(ssp, i, b) == IntermediateMessage.UserType)
          acc += b(IntermediateMessage.PayloadOffset) + IntermediateMessage.payloadLength(b)
        i += 1
      }
      acc
    }
    report("decode to UserMessage (payload copy)", records) { n =>
      var i = 0; var acc = 0L
      while (i < n) {
        IntermediateRecords.decode(ssp, i, framed(i & 1023)) match {
          case u: UserMessage => acc += u.payload.length
          case _ => ()
        }
        i += 1
      }
      acc
    }
    val user = readerOf(Seq(ssp), Map.empty).decoderFor(ssp)
    val envelope = new Envelope(ssp, 0L, -1L, null, null)
    report("control decoder, user record (refill the envelope, accept in place)", records) { n =>
      var i = 0; var acc = 0L
      while (i < n) {
        if (user.accept(envelope.fill(i, -1L, 0, null, framed(i & 1023), NoHeaders))) acc += envelope.valueOffset
        i += 1
      }
      acc
    }

    for (producers <- Seq(4, 64)) {
      val names = Array.tabulate(producers)(p => s"Partition $p")
      val start = names.foldLeft(SspControlState.empty)((s, p) => s(WatermarkMessage(p, producers, 0L), ssp, 0).state)
      val decoded = Array.tabulate(4096)(i => WatermarkMessage(names(i % producers), producers, 1000L + i))
      val encoded = decoded.map(m => IntermediateMessage.encode(m))

      report(s"SspControlState.apply, watermark, $producers producers", controls) { n =>
        var s = start; var i = 0; var acc = 0L
        while (i < n) {
          val m = decoded(i & 4095)
          val step = s(WatermarkMessage(m.producer, producers, m.timestamp + i), ssp, i)
          s = step.state
          if (step.watermarkAdvanced) acc += 1
          i += 1
        }
        acc
      }
      report(s"decodeControl (JSON), watermark, producer names of $producers", controls) { n =>
        var i = 0; var acc = 0L
        while (i < n) { acc += IntermediateMessage.decodeControl(ssp, i, encoded(i & 4095)).producerCount; i += 1 }
        acc
      }
      for (ssps <- Seq(1, 16)) {
        val all = (0 until ssps).map(p => SSP.kafka("mid", p))
        val perMessage = report(s"control decoder: decode + apply + row watermark, $producers producers, $ssps SSPs", controls) { n =>
          val t = readerOf(all, all.map(_ -> start).toMap)
          val chans = all.map(t.decoderFor).toArray
          val envelopes = all.map(s => new Envelope(s, 0L, -1L, null, null)).toArray
          var i = 0; var acc = 0L
          // the encoded timestamps repeat every 4096 messages, so later rounds mostly hit "older, ignored"
          while (i < n) {
            val k = i % ssps
            if (!chans(k).accept(envelopes(k).fill(i, -1L, 0, null, encoded(i & 4095), NoHeaders))) acc += 1
            i += 1
          }
          acc
        }
        if (producers == 4 && ssps == 1)
          Summary("control", "watermark message: decode, reconcile, task watermark (4 producers)", f"${perMessage / 1000}%.2f us")
      }
      val serialized = start.json
      report(s"SspControlState json round trip, $producers producers (${serialized.length} chars)", controls / 10) { n =>
        var i = 0; var acc = 0L
        while (i < n) { acc += SspControlState.parse(start.json, "bench").producers; i += 1 }
        acc
      }
    }
    val perBatch = batchBookkeeping(partitions = 8, batches = 400)
    Summary("control", "type-byte check of a user record", f"$typeCheck%.1f ns")
    Summary("control", "per-batch control bookkeeping, 8 SSPs/tasks, 1 watermark each, local store", f"${perBatch / 1000}%.0f us")
    println(s"(checksum $sink)")
  }

  /**
   * What one batch of the control benchmark (bench/control_overhead.py) adds per batch beyond its
   * records, on a local metadata store: every task parses its start states, decodes one watermark
   * and reports its result; the last report writes the batch's results as one value
   * (BatchResults, as the driver does while the job ends); the driver merges them, writes the
   * offset's states and deletes the previous batch's results. Returns the median us per batch.
   */
  private def batchBookkeeping(partitions: Int, batches: Int): Double = {
    val dir = java.nio.file.Files.createTempDirectory("control-bench-")
    val store = new streamctl.metadata.FileSystemMetadataStore(dir.toString, new org.apache.hadoop.conf.Configuration())
    val results = new ControlResults(store, "control-0")
    val collected = new BatchResults(results)
    val ssps = (0 until partitions).map(p => SSP.kafka("mid", p))
    // Every batch's watermark is newer than the last (across rounds too), so every batch changes the states.
    val encoded = Array.tabulate(batches * (Warmups + Rounds))(b => IntermediateMessage.encode(WatermarkMessage("bench", 1, 1000L * b)))
    var tick = 0
    var driverNs = 0L
    var offset = ControlState.initial
    val perBatch = report(s"per-batch bookkeeping, $partitions SSPs in $partitions tasks, 1 watermark each, local store", batches) { n =>
      var b = 0; var acc = 0L
      while (b < n) {
        // executors: one task per SSP
        collected.expect(offset.seq, ssps.map(ssp => TaskName.ofPartition(ssp.partition)))
        ssps.foreach { ssp =>
          val start = SspControlStates.write(TaskControl.startOf(offset.states, Seq(ssp)))
          val t = TaskControlReader(TaskName.ofPartition(ssp.partition), Seq(SspRange(ssp, 0L, Long.MaxValue)),
            Some(TaskControl(offset.seq, start, WatermarkSummary.empty)), Set("mid")).get
          t.decoderFor(ssp).accept(new Envelope(ssp, 0L, -1L, null, null).fill(b, -1L, 0, null, encoded(tick), NoHeaders))
          t.finish(collected.reported(offset.seq, TaskName.ofPartition(ssp.partition), _))
        }
        // driver: plan the next batch from the results, write its offset, commit
        val driverStart = System.nanoTime()
        val heard = collected.of(offset.seq).getOrElse(Nil).map(_._2)
        val next = ControlState(offset.seq + 1, SspControlStates.merge(offset.states +: heard))
        acc += ControlState.Codec.write(next).toString.length
        results.deleteBefore(offset.seq)
        driverNs += System.nanoTime() - driverStart
        offset = next
        tick += 1
        b += 1
      }
      acc
    }
    store.close()
    println(f"    of which on the driver (merge, offset JSON, delete): ${100.0 * driverNs / (tick * perBatch)}%.0f%%")
    val files = java.nio.file.Files.walk(dir)
    try files.sorted(java.util.Comparator.reverseOrder()).forEach(f => java.nio.file.Files.delete(f)) finally files.close()
    perBatch
  }

  /** The control decoding of a task reading `ssps` (of stream `mid`), from `start`. */
  private def readerOf(ssps: Seq[SSP], start: SspControlStates.States): TaskControlReader =
    TaskControlReader(TaskName("Partition 0"), ssps.map(SspRange(_, 0L, Long.MaxValue)),
      Some(TaskControl(1, SspControlStates.write(start), WatermarkSummary.empty)), Set("mid")).get

  /** Prints and returns the median ns per op. */
  private def report(name: String, ops: Int)(body: Int => Long): Double = {
    for (_ <- 0 until Warmups) sink += body(ops)
    val times = (0 until Rounds).map { _ =>
      val t0 = System.nanoTime()
      sink += body(ops)
      System.nanoTime() - t0
    }.sorted
    val median = times(Rounds / 2).toDouble / ops
    val best = times.head.toDouble / ops
    println(f"  $name%-75s ${median}%9.1f ns/op (best $best%.1f)")
    median
  }
}
