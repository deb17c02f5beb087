package streamctl.chooser

import streamctl.system.Envelope

// Classes loaded by name in ChooserFactoryTest, one per way a user's chooser.class can be.

/** Last offered first; remembers the options it was built with. */
class StackUserChooser(val options: Map[String, String]) extends MessageChooser {
  private val stack = new java.util.ArrayDeque[Envelope]()
  override def update(envelope: Envelope): Unit = stack.push(envelope)
  override def choose(): Envelope = stack.poll()
}

class NoArgUserChooser extends RoundRobinChooser

class JavaMapUserChooser(val options: java.util.Map[String, String]) extends RoundRobinChooser

class IntArgUserChooser(n: Int) extends RoundRobinChooser

class FailingUserChooser extends RoundRobinChooser {
  throw new IllegalStateException("no licence for this chooser")
}

abstract class AbstractUserChooser extends MessageChooser

class NotAUserChooser

/** A chooser whose stop fails, as a user's that releases some resource of its own may. */
class StopFailingUserChooser extends RoundRobinChooser {
  override def stop(): Unit = throw new IllegalStateException("lost its licence server")
}
