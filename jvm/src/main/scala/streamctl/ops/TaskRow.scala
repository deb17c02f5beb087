package streamctl.ops

/**
 * One SSP read by one task. `source` is the streamctl source's index in its query; `executor`
 * (`executor_<host>_<id>`) is the executor host affinity assigned the task, if any.
 */
final case class TaskRow(
    source: String,
    stream: String,
    partition: Int,
    task: String,
    executor: Option[String]
)
