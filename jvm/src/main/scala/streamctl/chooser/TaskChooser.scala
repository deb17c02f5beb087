package streamctl.chooser

import streamctl.system.{Envelope, EnvelopeOrder, SSP}

/**
 * The chooser a task's reader talks to: the composed chain built by [[ChooserFactory]], already
 * registered and started, plus what the reader needs beyond `update`/`choose`.
 *
 * The reader ([[streamctl.system.KafkaTaskReader]]) offers one envelope of every SSP that has one,
 * then chooses; when `choose()` returns null it fetches for [[waitingFor]] (bootstrap needs those
 * first) or for any SSP, and reports progress made without envelopes with [[advancedTo]]. A null
 * from `choose()` while every SSP has an envelope offered and nothing is left to fetch means the
 * chooser (a user's) is holding envelopes it will never give: the reader fails the task rather than
 * commit offsets past them.
 */
final class TaskChooser private[chooser] (
    root: MessageChooser,
    bootstrap: BootstrappingChooser,
    userClass: Option[String]
) extends MessageChooser with EnvelopeOrder {
  override def register(ssp: SSP, offset: Long): Unit = root.register(ssp, offset)
  override def start(): Unit = root.start()
  override def stop(): Unit = root.stop()

  override def update(envelope: Envelope): Unit = root.update(envelope)

  override def choose(): Envelope = root.choose()

  /** The user's chooser class when there is one (streamctl's choosers may be wrapped around it). */
  override def describe: String = userClass.getOrElse(root.getClass.getName)

  /** True while some bootstrap SSP of the task is behind its start-time head. */
  override def isBootstrapping: Boolean = bootstrap != null && bootstrap.isBootstrapping

  /** Bootstrap SSPs the task is blocked on; see [[BootstrappingChooser.waitingFor]]. */
  override def waitingFor: Seq[SSP] = if (bootstrap == null) Nil else bootstrap.waitingFor

  /**
   * Progress without envelopes; see [[BootstrappingChooser.advancedTo]]. Cheap to call for any SSP.
   */
  override def advancedTo(ssp: SSP, nextOffset: Long): Unit =
    if (bootstrap != null) bootstrap.advancedTo(ssp, nextOffset)
}

object TaskChooser {

  /**
   * `chooser` alone, registered and started by the caller, as a task's reader takes it (tests,
   * benchmarks).
   */
  def of(chooser: MessageChooser): TaskChooser = new TaskChooser(chooser, null, None)
}
