package streamctl.chooser

import java.lang.reflect.InvocationTargetException

import streamctl.StreamctlException

/**
 * Instantiates a user's chooser class (`chooser.class`) by reflection.
 *
 * The class must be public and concrete, implement [[MessageChooser]], and have one of
 * these public constructors, tried in this order:
 *  1. `(options: scala.collection.immutable.Map[String, String])` — the query's options,
 *  2. `(options: java.util.Map[String, String])` — the same, for Java classes,
 *  3. `()`.
 * It is looked up through the thread's context class loader first (where Spark puts jars
 * added with `--jars`), then the loader of streamctl itself.
 *
 * {{{
 * class LatestFirst(options: Map[String, String]) extends MessageChooser { ... }
 * UserChooserLoader.load("com.example.LatestFirst", Map.empty)
 * }}}
 */
object UserChooserLoader {
  def load(className: String, options: Map[String, String]): MessageChooser = {
    val what = s"${ChooserConfig.ClassKey}=$className"
    val cls = findClass(className, what)
    if (!classOf[MessageChooser].isAssignableFrom(cls))
      throw StreamctlException(s"$what: class does not implement ${classOf[MessageChooser].getName}")
    if (cls.isInterface || java.lang.reflect.Modifier.isAbstract(cls.getModifiers))
      throw StreamctlException(s"$what: class is abstract; give a concrete class")

    def ctor(params: Class[_]*) =
      try Some(cls.getConstructor(params: _*)) catch { case _: NoSuchMethodException => None }

    val (constructor, args) =
      ctor(classOf[scala.collection.immutable.Map[_, _]]).map(c => (c, Array[AnyRef](options)))
        .orElse(ctor(classOf[java.util.Map[_, _]]).map(c => (c, Array[AnyRef](toJava(options)))))
        .orElse(ctor().map(c => (c, Array.empty[AnyRef])))
        .getOrElse(throw StreamctlException(
          s"$what: class has no public constructor taking (Map[String, String]), (java.util.Map[String, String]) or ()"))
    try constructor.newInstance(args: _*).asInstanceOf[MessageChooser]
    catch {
      case e: InvocationTargetException =>
        throw StreamctlException(s"$what: constructor failed: ${e.getCause}", e.getCause)
      case e: ReflectiveOperationException =>
        throw StreamctlException(s"$what: cannot instantiate: $e", e)
    }
  }

  private def findClass(name: String, what: String): Class[_] = {
    val loaders = Seq(Thread.currentThread.getContextClassLoader, getClass.getClassLoader).filter(_ != null).distinct
    loaders.iterator.flatMap { l =>
      try Some(Class.forName(name, false, l))
      catch { case _: ClassNotFoundException | _: NoClassDefFoundError => None }
    }.nextOption().getOrElse(throw StreamctlException(
      s"$what: class not found on the classpath (add its jar with --jars or spark.jars)"))
  }

  private def toJava(options: Map[String, String]): java.util.Map[String, String] = {
    val m = new java.util.HashMap[String, String]()
    options.foreach { case (k, v) => m.put(k, v) }
    java.util.Collections.unmodifiableMap(m)
  }
}
