package streamctl.config

/**
 * Options a user's class reads itself: every option starting with `prefix` (`chooser.option.`),
 * valid only when `owner` (the option naming the class) is set. The class gets them, with every
 * other option, in canonical form (see [[OptionSet.canonical]]).
 */
final case class UserClassOptions(prefix: String, owner: OptionSpec[_])
