package streamctl.locality

import scala.collection.mutable

import streamctl.system.TaskName

/**
 * Sticky task -> executor assignment, in the spirit of Samza's locality-aware grouping.
 *
 * With T tasks on E live executors every executor ends with floor(T/E) or ceil(T/E) tasks, and the
 * number of moves is the smallest that allows it:
 *   1. A task stays on its previous executor while that executor lives.
 *   1. Each executor gets a capacity of floor or ceil; the T mod E ceil slots go to the executors
 *      holding the most tasks already, because only there does an extra slot save a move.
 *   1. An executor over its capacity releases exactly its surplus: first tasks that can go back to
 *      a returned executor, then tasks that came from a lost one, so its own tasks stay.
 *   1. Released tasks, tasks of lost executors and new tasks are then placed: first back on the
 *      executor they remember from a loss (see [[TaskLocality.homes]]) if it is live and has room,
 *      then each on the least-loaded executor with room.
 *
 * Every choice is broken by task name and executor (host, id), after sorting the inputs, so the
 * result depends only on the sets given, never on their order. With no live executor (driver-only
 * local mode) nothing is placed and tasks remember their executor, so they go back when it returns.
 *
 * {{{
 * val executors = Seq(ExecutorId("1", "a"), ExecutorId("2", "b"), ExecutorId("3", "c"))
 * val tasks = (0 until 12).map(p => TaskName(s"Partition $p"))
 * val first = StickyAssigner.assign(TaskLocality.empty, tasks, executors)     // 4 tasks each
 * val next = StickyAssigner.assign(first.locality, tasks, executors.take(2))  // 6 each
 * next.moved.size                                                              // 4
 * }}}
 */
object StickyAssigner {

  def assign(
      previous: TaskLocality,
      tasks: Seq[TaskName],
      liveExecutors: Seq[ExecutorId]
  ): Assignment = {
    val taskList = tasks.distinct.sorted
    val executors = liveExecutors.distinct.sorted
    val placement = if (executors.isEmpty) Map.empty[TaskName, ExecutorId]
    else place(previous, taskList, executors)
    result(previous, taskList, executors.toSet, placement)
  }

  private def place(
      previous: TaskLocality,
      tasks: Seq[TaskName],
      executors: Seq[ExecutorId]
  ): Map[TaskName, ExecutorId] = {
    val live = executors.toSet
    val (staying, orphans) = tasks.partition(t => previous.executorOf(t).exists(live))
    val kept: Map[ExecutorId, Seq[TaskName]] =
      executors.map(_ -> Seq.empty[TaskName]).toMap ++ staying.groupBy(t => previous.placement(t))

    val floor = tasks.size / executors.size
    val ceilSlots = tasks.size % executors.size
    // sortBy is stable, so executors holding equally many keep their (host, id) order.
    val capacity: Map[ExecutorId, Int] = executors.sortBy(e => -kept(e).size).zipWithIndex
      .map { case (e, rank) => e -> (if (rank < ceilSlots) floor + 1 else floor) }.toMap

    val room: Map[ExecutorId, Int] = executors.map(e => e -> (capacity(e) - kept(e).size)).toMap
    def wantsToGoHome(t: TaskName): Boolean =
      previous.homes.get(t).exists(h => room.getOrElse(h, 0) > 0)

    val assigned = mutable.Map.empty[TaskName, ExecutorId]
    val load = mutable.Map.empty[ExecutorId, Int]
    val released = mutable.ArrayBuffer.empty[TaskName]
    executors.foreach { e =>
      // The surplus must leave anyway, so the choice is free. Tasks that can go home leave
      // first: the same moves then also return tasks to an executor that came back. Next leave
      // guests (tasks that took refuge here from a lost executor, so remember a home): the
      // executor's own tasks, with their warm consumers, stay when a replacement executor joins.
      val leavingOrder = kept(e).sortBy(t => (!wantsToGoHome(t), !previous.isGuest(t), t))
      val (leaving, remaining) = leavingOrder.splitAt(math.max(0, kept(e).size - capacity(e)))
      released ++= leaving
      remaining.foreach(assigned(_) = e)
      load(e) = remaining.size
    }

    val pool = (orphans ++ released).sorted
    def hasRoom(e: ExecutorId): Boolean = load.get(e).exists(_ < capacity(e))
    def put(t: TaskName, e: ExecutorId): Unit = { assigned(t) = e; load(e) += 1 }

    val homeless = pool.filter { t =>
      previous.homes.get(t).filter(hasRoom) match {
        case Some(home) => put(t, home); false
        case None => true
      }
    }
    homeless.foreach { t =>
      val leastLoaded =
        executors.filter(hasRoom).minBy(e => load(e)) // minBy keeps the first of equals
      put(t, leastLoaded)
    }
    assigned.toMap
  }

  private def result(
      previous: TaskLocality,
      tasks: Seq[TaskName],
      live: Set[ExecutorId],
      placement: Map[TaskName, ExecutorId]
  ): Assignment = {
    val homes = tasks.flatMap { t =>
      // A task leaving a lost executor remembers it; otherwise it keeps what it remembered.
      val lostFrom = previous.executorOf(t).filterNot(live)
      lostFrom.orElse(previous.homes.get(t)).filterNot(placement.get(t).contains).map(t -> _)
    }.toMap
    val moved =
      tasks.filter(t => previous.executorOf(t).exists(p => placement.get(t).exists(_ != p))).toSet
    // Settled: moved by a rebalance while it remembered a home (taken in by a replacement), or
    // settled before and not displaced again since; a task displaced now is a guest.
    val settled = homes.keySet.filter { t =>
      val displaced = previous.executorOf(t).exists(p => !live(p))
      !displaced && (previous.settled(t) || (previous.homes.contains(t) && moved(t)))
    }
    Assignment(TaskLocality(placement, homes, settled), moved)
  }
}
