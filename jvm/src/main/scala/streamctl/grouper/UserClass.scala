package streamctl.grouper

import java.lang.reflect.InvocationTargetException

import streamctl.StreamctlException

/**
 * Instantiates a user-supplied class named by a source option, turning every way that can
 * go wrong into an error naming the option and the class. The class may take the source
 * options (`Map[String, String]`) in its constructor, so it can read settings of its own;
 * otherwise it needs a public no-argument constructor.
 *
 * {{{
 * val g = UserClass.instantiate("grouper.class", "com.acme.MyGrouper", classOf[SystemStreamPartitionGrouper], options)
 * }}}
 */
object UserClass {
  def instantiate[T](option: String, className: String, expected: Class[T], options: Map[String, String]): T = {
    def fail(why: String, cause: Throwable = null): Nothing =
      throw StreamctlException(s"Option $option: class '$className' $why", cause)

    val cls =
      try Class.forName(className.trim, false, loader)
      catch {
        case e: ClassNotFoundException => fail("was not found on the classpath (add its jar with --jars or spark.jars)", e)
        case e: LinkageError => fail(s"could not be loaded: $e", e)
      }
    if (!expected.isAssignableFrom(cls)) fail(s"does not implement ${expected.getName}")
    if (cls.isInterface || java.lang.reflect.Modifier.isAbstract(cls.getModifiers)) fail("is abstract; name a concrete class")

    val withOptions = cls.getConstructors.find(_.getParameterTypes.sameElements(Seq(classOf[Map[_, _]])))
    val noArgs = cls.getConstructors.find(_.getParameterCount == 0)
    try {
      val instance = (withOptions, noArgs) match {
        case (Some(c), _) => c.newInstance(options)
        case (None, Some(c)) => c.newInstance()
        case _ => fail("has no public constructor taking no arguments or a Map[String, String] of options")
      }
      expected.cast(instance)
    } catch {
      case e: InvocationTargetException =>
        val cause = Option(e.getCause).getOrElse(e)
        fail(s"failed in its constructor: $cause", cause)
      case e: ReflectiveOperationException => fail(s"could not be instantiated: $e", e)
    }
  }

  // Spark puts user jars (--jars) on the context class loader, not on the one that loaded streamctl.
  private def loader: ClassLoader =
    Option(Thread.currentThread.getContextClassLoader).getOrElse(getClass.getClassLoader)
}
