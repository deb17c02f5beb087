package streamctl.testing.plugins;

import java.util.Map;

import org.apache.kafka.clients.producer.Partitioner;
import org.apache.kafka.common.Cluster;

/**
 * A producer partitioner written against Kafka's own {@code org.apache.kafka} interface, as a
 * third-party one is: a record goes to partition (last byte of its key, or of its value when it has
 * no key) modulo the partition count, so a test can tell its choice from Kafka's default.
 *
 * <pre>
 * df.writeStream.format("streamctl").option("kafka.partitioner.class", "streamctl.testing.plugins.LastBytePartitioner")
 * </pre>
 */
public class LastBytePartitioner implements Partitioner {
  @Override
  public int partition(String topic, Object key, byte[] keyBytes, Object value, byte[] valueBytes, Cluster cluster) {
    byte[] bytes = keyBytes != null ? keyBytes : valueBytes;
    if (bytes == null || bytes.length == 0) return 0;
    return (bytes[bytes.length - 1] & 0xff) % cluster.partitionCountForTopic(topic);
  }

  @Override
  public void configure(Map<String, ?> configs) {}

  @Override
  public void close() {}
}
