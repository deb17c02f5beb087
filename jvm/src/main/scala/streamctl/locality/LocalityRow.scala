package streamctl.locality

/**
 * Where host affinity placed one task of a query's source; `location` is `executor_<host>_<id>`.
 */
final case class LocalityRow(
    source: String,
    task: String,
    executorId: String,
    host: String,
    location: String
)
