package streamctl.system

/**
 * What a task's reader ([[KafkaTaskReader]]) needs of whatever decides the order of its envelopes:
 * the chooser package implements it (`chooser.ChooserFactory.forReader`), so the reader, which only
 * moves records, knows nothing of choosers. The contract on `update` and `choose` is
 * `chooser.MessageChooser`'s: at most one outstanding envelope per SSP, `choose` returns null when
 * it has none to give, never the same envelope twice.
 */
trait EnvelopeOrder {
  def update(envelope: Envelope): Unit
  def choose(): Envelope
  def stop(): Unit

  /** True while the order holds envelopes back until some SSPs catch up (bootstrap streams). */
  def isBootstrapping: Boolean = false

  /** SSPs the order is blocked on while [[isBootstrapping]], named when a read cannot go on. */
  def waitingFor: Seq[SSP] = Nil

  /**
   * `ssp` progressed to `nextOffset` without an envelope (a control message consumed, a range
   * ended).
   */
  def advancedTo(ssp: SSP, nextOffset: Long): Unit = ()

  /** The order's class, as an error about what it chose names it. */
  def describe: String = getClass.getName
}
