package streamctl.startpoint

import streamctl.startpoint.Startpoint._

/**
 * One method per startpoint type, so that code handling startpoints (resolution, the CLI's
 * table, the Python bridge) is told by the compiler when a type is added, and Java callers
 * get the same exhaustiveness as a Scala `match`.
 *
 * {{{
 * val name = sp.accept(new StartpointVisitor[String] {
 *   def visitSpecific(s: Specific) = "specific"
 *   def visitTimestamp(s: Timestamp) = "timestamp"
 *   def visitOldest(s: Oldest) = "oldest"
 *   def visitUpcoming(s: Upcoming) = "upcoming"
 *   def visitCustom(s: Custom) = s.kind
 * })
 * }}}
 */
trait StartpointVisitor[R] {
  def visitSpecific(startpoint: Specific): R
  def visitTimestamp(startpoint: Timestamp): R
  def visitOldest(startpoint: Oldest): R
  def visitUpcoming(startpoint: Upcoming): R
  def visitCustom(startpoint: Custom): R
}
