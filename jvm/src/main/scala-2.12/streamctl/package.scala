import scala.collection.{IterableView, SortedSetLike}
import scala.collection.compat.{
  ImmutableSortedMapExtensions,
  MapViewExtensionMethods,
  TraversableLikeExtensionMethods,
  TraversableOnceExtensionMethods
}
import scala.collection.generic.{CanBuildFrom, IsTraversableLike, SortedSetFactory}
import scala.collection.immutable.SortedMap
import scala.util.matching.Regex

/**
 * Scala 2.12 only (Spark 3.5's PyPI build): the Scala 2.13 collection methods the sources use, so
 * the same feature code compiles on every Spark line with no import at all. On Scala 2.13 there is
 * no `streamctl` package object: the standard library has them. A file outside package `streamctl`
 * itself sees these by opening its package in two clauses (`package streamctl` then
 * `package control`). Most come from scala-collection-compat 2.7.0, the version Spark 3.5 ships (so
 * nothing here is bundled); the rest, which that version lacks, are written out below.
 *
 * {{{
 * package streamctl
 * package planner
 *
 * object Example { def partitions(s: String): Option[Int] = s.toIntOption }
 * }}}
 */
package object streamctl {
  // compat's own implicits, forwarded (its package object cannot be extended): the 2.13 methods
  // the sources use are groupMap and groupMapReduce, maxOption and minOption, SortedMap.from,
  // view.mapValues and to(SortedSet).
  private val compat = scala.collection.compat.`package`

  implicit def toTraversableLikeExtensionMethods[Repr](self: Repr)(
      implicit traversable: IsTraversableLike[Repr]
  ): TraversableLikeExtensionMethods[traversable.A, Repr] =
    compat.toTraversableLikeExtensionMethods(self)

  implicit def toTraversableOnceExtensionMethods[A](
      self: TraversableOnce[A]
  ): TraversableOnceExtensionMethods[A] = compat.toTraversableOnceExtensionMethods(self)

  implicit def toImmutableSortedMapExtensions(
      fact: SortedMap.type
  ): ImmutableSortedMapExtensions = compat.toImmutableSortedMapExtensions(fact)

  implicit def toMapViewExtensionMethods[K, V, C <: scala.collection.Map[K, V]](
      self: IterableView[(K, V), C]
  ): MapViewExtensionMethods[K, V, C] = compat.toMapViewExtensionMethods(self)

  implicit def sortedSetCompanionToCBF[
      A: Ordering,
      CC[X] <: scala.collection.SortedSet[X] with SortedSetLike[X, CC[X]]
  ](fact: SortedSetFactory[CC]): CanBuildFrom[Any, A, CC[A]] =
    compat.sortedSetCompanionToCBF(fact)

  implicit final class IteratorCompat[A](private val it: Iterator[A]) extends AnyVal {
    def nextOption(): Option[A] = if (it.hasNext) Some(it.next()) else None
  }

  implicit final class StringCompat(private val s: String) extends AnyVal {
    def toIntOption: Option[Int] = parsed(java.lang.Integer.parseInt)
    def toLongOption: Option[Long] = parsed(java.lang.Long.parseLong)
    def toBooleanOption: Option[Boolean] =
      if (s.equalsIgnoreCase("true")) Some(true)
      else if (s.equalsIgnoreCase("false")) Some(false)
      else None
    private def parsed[T](parse: String => T): Option[T] =
      try Some(parse(s))
      catch { case _: NumberFormatException => None }
  }

  implicit final class OptionCompanionCompat(private val o: Option.type) extends AnyVal {
    def when[A](cond: Boolean)(a: => A): Option[A] = if (cond) Some(a) else None
  }

  implicit final class ArrayCompat[A](private val a: Array[A]) extends AnyVal {
    def sortInPlace()(implicit ord: Ordering[A]): Array[A] = { scala.util.Sorting.quickSort(a); a }
  }

  implicit final class RegexCompat(private val r: Regex) extends AnyVal {
    def matches(s: CharSequence): Boolean = r.pattern.matcher(s).matches()
  }

  implicit final class SeqCompat[A](private val xs: Seq[A]) extends AnyVal {
    def distinctBy[B](f: A => B): Seq[A] = {
      val seen = scala.collection.mutable.HashSet.empty[B]
      xs.filter(x => seen.add(f(x)))
    }
  }
}
