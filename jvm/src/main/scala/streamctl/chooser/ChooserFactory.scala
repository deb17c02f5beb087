package streamctl.chooser

import streamctl.{StreamctlException, UserClass}
import streamctl.system.{EnvelopeOrder, SSP}

/**
 * Builds a task's chooser chain from a [[ChooserConfig]], outermost first: bootstrap → priority
 * tiers → batching → base (round-robin, time-aligned or the user's class). A layer is left out when
 * it has nothing to do for the task (no bootstrap SSP behind its head, a single priority, no batch
 * size), so the common case costs one call. Each priority tier gets its own batching + base
 * instance.
 *
 * {{{
 * ChooserFactory.validate(cfg)                       // driver, at query start
 * val c = ChooserFactory.forTask(cfg,                // reader, per task and batch
 *   startOffsets   = Map(SSP.kafka("tx", 0) -> 100L, SSP.kafka("currency", 0) -> 0L),
 *   bootstrapHeads = Map(SSP.kafka("currency", 0) -> 42L))
 * }}}
 */
object ChooserFactory {

  /** Fails fast, with an error naming the option, when `chooser.class` cannot be instantiated. */
  def validate(config: ChooserConfig): Unit = { newBase(config); () }

  /** A fresh base chooser: the user's class, time-aligned or round-robin. */
  def newBase(config: ChooserConfig): MessageChooser = config.chooserClass match {
    case Some(c) => UserClass.instantiate(
        ChooserConfig.ChooserClass.name,
        c,
        classOf[MessageChooser],
        config.options
      )
    case None if config.timeAligned => new TimeAlignedChooser
    case None => new RoundRobinChooser
  }

  /**
   * The chooser a task's reader gets, registered and started: [[forTask]], except that a task
   * reading one SSP without a user chooser gets a [[SingleSspChooser]] (with one SSP every built-in
   * chain has one possible order, and bootstrap has nothing to hold back). A user's chooser is
   * always called, even for one SSP: it may count or log what it sees.
   */
  def forReader(
      config: ChooserConfig,
      startOffsets: Map[SSP, Long],
      bootstrapHeads: Map[SSP, Long]
  ): EnvelopeOrder =
    if (startOffsets.size <= 1 && config.chooserClass.isEmpty) new SingleSspChooser
    else forTask(config, startOffsets, bootstrapHeads)

  /**
   * The chooser of one task, registered with `startOffsets` (every SSP of the task, in SSP order)
   * and started.
   *
   * @param bootstrapHeads
   *   start-time head of bootstrap SSPs (may hold other tasks' SSPs too); every bootstrap SSP of
   *   the task must be present
   */
  def forTask(
      config: ChooserConfig,
      startOffsets: Map[SSP, Long],
      bootstrapHeads: Map[SSP, Long]
  ): TaskChooser = {
    val ssps = startOffsets.keys.toSeq.sorted
    val newTier: () => MessageChooser = config.batchSize match {
      case Some(n) => () => new BatchingChooser(newBase(config), n)
      case None => () => newBase(config)
    }
    val priorityOf = (ssp: SSP) => config.priorityOf(ssp.stream)
    val tiered =
      if (ssps.map(priorityOf).distinct.size > 1) new TieredPriorityChooser(priorityOf, newTier)
      else newTier()

    val isBootstrap = (ssp: SSP) => config.isBootstrap(ssp.stream)
    val lagging = ssps.filter(isBootstrap).exists { ssp =>
      val head = bootstrapHeads.getOrElse(
        ssp,
        throw StreamctlException(
          s"Bootstrap SSP ${ssp.key} has no start-time head offset; the planner must record one"
        )
      )
      startOffsets(ssp) < head
    }
    val bootstrap =
      if (lagging) new BootstrappingChooser(tiered, isBootstrap, bootstrapHeads) else null

    val chooser =
      new TaskChooser(if (bootstrap != null) bootstrap else tiered, bootstrap, config.chooserClass)
    ssps.foreach(ssp => chooser.register(ssp, startOffsets(ssp)))
    chooser.start()
    chooser
  }
}
