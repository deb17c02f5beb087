package streamctl

import java.lang.reflect.InvocationTargetException

/**
 * Instantiates a user's class named by a source option (`chooser.class`, `grouper.class`,
 * `partition.expansion.algorithm`), turning every way that can go wrong into an error that names
 * the option and the class.
 *
 * The class must be public, concrete, implement `expected`, and have one of these public
 * constructors, tried in this order:
 *   1. `(options: scala.collection.immutable.Map[String, String])`: the query's options,
 *   2. `(options: java.util.Map[String, String])`: the same, for Java classes,
 *   3. `()`.
 * It is looked up through the thread's context class loader first (where Spark puts jars added with
 * `--jars`), then the loader of streamctl itself.
 *
 * {{{
 * val g = UserClass.instantiate("grouper.class", "com.acme.MyGrouper", classOf[SystemStreamPartitionGrouper], options)
 * }}}
 */
object UserClass {
  def instantiate[T](
      option: String,
      className: String,
      expected: Class[T],
      options: Map[String, String]
  ): T = {
    def fail(why: String, cause: Throwable = null): Nothing =
      throw StreamctlException(s"Option $option: class '$className' $why", cause)

    // A class that is there but cannot be linked (built for a newer Java, a dependency missing)
    // says so: "not found" would send the user to look for a jar they already added.
    val cls = find(className.trim) match {
      case Right(c) => c
      case Left(Some(e)) => fail(s"could not be loaded: $e", e)
      case Left(None) =>
        fail("was not found on the classpath (add its jar with --jars or spark.jars)")
    }
    try make(cls, expected, options, fail(_, _))
    catch {
      case e: ExceptionInInitializerError =>
        val cause = Option(e.getCause).getOrElse(e)
        fail(s"failed in its static initializer: $cause", cause)
      case e: LinkageError => fail(s"could not be loaded: $e", e)
    }
  }

  private def make[T](
      cls: Class[_],
      expected: Class[T],
      options: Map[String, String],
      fail: (String, Throwable) => Nothing
  ): T = {
    if (!expected.isAssignableFrom(cls)) fail(s"does not implement ${expected.getName}", null)
    if (cls.isInterface || java.lang.reflect.Modifier.isAbstract(cls.getModifiers))
      fail("is abstract; name a concrete class", null)

    // The constructor found and its arguments, as a call to make.
    def ctor(args: Array[AnyRef], params: Class[_]*): Option[() => AnyRef] =
      try {
        val c = cls.getConstructor(params: _*);
        Some(() => c.newInstance(args: _*).asInstanceOf[AnyRef])
      } catch { case _: NoSuchMethodException => None }

    val construct: () => AnyRef =
      ctor(Array[AnyRef](options), classOf[scala.collection.immutable.Map[_, _]])
        .orElse(ctor(Array[AnyRef](toJava(options)), classOf[java.util.Map[_, _]]))
        .orElse(ctor(Array.empty[AnyRef]))
        .getOrElse(fail(
          "has no public constructor taking (Map[String, String]), (java.util.Map[String, String]) or ()",
          null
        ))
    try expected.cast(construct())
    catch {
      case e: InvocationTargetException =>
        val cause = Option(e.getCause).getOrElse(e)
        fail(s"failed in its constructor: $cause", cause)
      case e: ReflectiveOperationException => fail(s"could not be instantiated: $e", e)
    }
  }

  /** The class from the first loader that has it; else the first linkage error, if any. */
  private def find(name: String): Either[Option[LinkageError], Class[_]] = {
    val loaders = Seq(
      Thread.currentThread.getContextClassLoader,
      getClass.getClassLoader
    ).filter(_ != null).distinct
    val tries = loaders.iterator.map { l =>
      try Right(Class.forName(name, false, l))
      catch {
        case _: ClassNotFoundException => Left(None)
        case e: LinkageError => Left(Some(e))
      }
    }.toSeq
    tries.collectFirst { case r @ Right(_) => r }.getOrElse(Left(tries.collectFirst {
      case Left(Some(e)) => e
    }))
  }

  private def toJava(options: Map[String, String]): java.util.Map[String, String] = {
    val m = new java.util.HashMap[String, String]()
    options.foreach { case (k, v) => m.put(k, v) }
    java.util.Collections.unmodifiableMap(m)
  }
}
