import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * Creates topics on the local broker: {@code CreateTopics <bootstrap servers> <name>:<partitions> ...}.
 * Run by {@code python -m streamctl broker --topic}, as a single-file Java program on the
 * broker's own classpath, because the broker's jars carry Kafka's admin client but no topic tool.
 */
public class CreateTopics {
    public static void main(String[] args) throws Exception {
        List<NewTopic> topics = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            String[] nameAndCount = args[i].split(":");
            topics.add(new NewTopic(nameAndCount[0], Optional.of(Integer.parseInt(nameAndCount[1])), Optional.empty()));
        }
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]))) {
            admin.createTopics(topics).all().get();
        }
    }
}
