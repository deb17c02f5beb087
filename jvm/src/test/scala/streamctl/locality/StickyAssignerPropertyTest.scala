package streamctl.locality

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test
import scala.util.Random

import streamctl.system.TaskName

/**
 * Seeded random scenarios: executors lost, added and returning, tasks added and removed, and
 * arbitrary (unbalanced, stale) previous states. After every rebalance the balance invariant holds
 * and the number of moves equals a lower bound computed independently of the assigner.
 */
class StickyAssignerPropertyTest {
  private val pool = (0 until 12).map(i => ExecutorId(i.toString, s"host-${i % 4}"))
  private def tasks(n: Int): Seq[TaskName] = (0 until n).map(p => TaskName(s"Partition $p"))

  /**
   * Fewest moves any balanced assignment needs: at most min(kept, capacity) tasks can stay on an
   * executor, capacities are floor except for T mod E executors with one more, and that extra slot
   * only helps an executor already holding more than floor.
   */
  private def lowerBound(previous: TaskLocality, ts: Seq[TaskName], live: Seq[ExecutorId]): Int = {
    val hadExecutor = ts.count(previous.placement.contains)
    if (live.isEmpty) return 0
    val kept = live.map(e => ts.count(t => previous.executorOf(t).contains(e)))
    val floor = ts.size / live.size
    val stays =
      kept.map(math.min(_, floor)).sum + math.min(ts.size % live.size, kept.count(_ > floor))
    hadExecutor - stays
  }

  private def check(
      previous: TaskLocality,
      ts: Seq[TaskName],
      live: Seq[ExecutorId],
      random: Random,
      scenario: String
  ): Assignment = {
    val a = StickyAssigner.assign(previous, ts, live)
    val placement = a.locality.placement
    if (live.isEmpty) {
      assertTrue(placement.isEmpty && a.moved.isEmpty, scenario)
    } else {
      assertEquals(ts.toSet, placement.keySet, scenario)
      assertTrue(placement.values.forall(live.contains), scenario)
      val loads = a.locality.loads
      live.foreach { e =>
        val load = loads.getOrElse(e, 0)
        // |load - T/E| < 1, in integers
        assertTrue(
          math.abs(load * live.size - ts.size) < live.size,
          s"$scenario: $e has $load of ${ts.size} on ${live.size}"
        )
        // An executor gives tasks away only down to its final load, never more.
        val kept = ts.filter(t => previous.executorOf(t).contains(e))
        val gaveAway = kept.count(t => !placement.get(t).contains(e))
        assertEquals(math.max(0, kept.size - load), gaveAway, s"$scenario: $e gave away too many")
      }
    }
    assertEquals(lowerBound(previous, ts, live), a.moved.size, scenario)
    // A move is a change of executor; a task left without one (no executor live) has not moved.
    val changed =
      ts.filter(t => previous.executorOf(t).exists(p => placement.get(t).exists(_ != p)))
    assertEquals(changed.toSet, a.moved, scenario)
    assertTrue(
      a.locality.homes.forall { case (t, h) => ts.contains(t) && !placement.get(t).contains(h) },
      scenario
    )
    val shuffled = StickyAssigner.assign(
      TaskLocality(
        random.shuffle(previous.placement.toSeq).toMap,
        random.shuffle(previous.homes.toSeq).toMap,
        random.shuffle(previous.settled.toSeq).toSet
      ),
      random.shuffle(ts),
      random.shuffle(live)
    )
    assertEquals(a, shuffled, s"$scenario: depends on input order")
    // HostAffinity relies on it: the next batch, with nothing changed, is not worked out again.
    assertEquals(
      Assignment(a.locality, Set.empty),
      StickyAssigner.assign(a.locality, ts, live),
      s"$scenario: assigning the result again changes it"
    )
    a
  }

  private def scrambled(ts: Seq[TaskName], random: Random): TaskLocality = {
    def anyExecutor = pool(random.nextInt(pool.size))
    val homes = ts.filter(_ => random.nextDouble() < 0.3).map(_ -> anyExecutor).toMap
    TaskLocality(
      ts.filter(_ => random.nextDouble() < 0.8).map(_ -> anyExecutor).toMap,
      homes,
      homes.keySet.filter(_ => random.nextBoolean())
    )
  }

  @Test def randomHistoriesStayBalancedWithFewestMoves(): Unit = {
    (1 to 400).foreach { seed =>
      val random = new Random(seed)
      var live = random.shuffle(pool).take(1 + random.nextInt(6))
      var taskCount = random.nextInt(60)
      var locality = StickyAssigner.assign(TaskLocality.empty, tasks(taskCount), live).locality
      (1 to 10).foreach { step =>
        random.nextInt(5) match {
          case 0 if live.nonEmpty => live = live.filterNot(_ == live(random.nextInt(live.size)))
          case 1 => live = (live ++ random.shuffle(
              pool.filterNot(live.contains)
            ).take(1 + random.nextInt(2))).distinct
          case 2 => taskCount = math.max(0, taskCount + random.nextInt(21) - 10)
          case 3 => locality = scrambled(tasks(taskCount), random)
          case _ => live = random.shuffle(pool).take(random.nextInt(7))
        }
        locality =
          check(locality, tasks(taskCount), live, random, s"seed $seed step $step").locality
      }
    }
  }

  /** Checks the lower bound itself: on tiny cases, search every balanced assignment. */
  @Test def lowerBoundMatchesExhaustiveSearch(): Unit = {
    (1 to 300).foreach { seed =>
      val random = new Random(seed)
      val ts = tasks(random.nextInt(7))
      val live = random.shuffle(pool.take(4)).take(1 + random.nextInt(3))
      val previous = TaskLocality(
        ts.filter(_ => random.nextDouble() < 0.8).map(_ -> pool(random.nextInt(4))).toMap
      )
      val all = ts.foldLeft(Seq(Map.empty[TaskName, ExecutorId])) { (partial, t) =>
        for (m <- partial; e <- live) yield m + (t -> e)
      }
      val balanced = all.filter { m =>
        live.forall(e => math.abs(m.count(_._2 == e) * live.size - ts.size) < live.size)
      }
      val fewest = balanced.map(m => ts.count(t => previous.executorOf(t).exists(_ != m(t)))).min
      assertEquals(fewest, lowerBound(previous, ts, live), s"seed $seed")
      assertEquals(fewest, StickyAssigner.assign(previous, ts, live).moved.size, s"seed $seed")
    }
  }
}
