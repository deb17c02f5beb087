import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Allows a principal operations on resources of the local broker:
 * {@code GrantAcls <bootstrap servers> <principal> (<resource type> <pattern type> <name> <operation>)...},
 * e.g. {@code GrantAcls 127.0.0.1:9092 User:alice TOPIC LITERAL orders WRITE}, with Kafka's enum
 * names. Returns once the broker's authorizer applies them (it answers describeAcls from its own
 * copy of the cluster metadata, which follows the controller's). Run by
 * {@code SecuredKafkaBroker.grant} as a single-file Java program on the broker's own classpath,
 * whose jars carry Kafka's admin client but no ACL tool.
 */
public class GrantAcls {
    public static void main(String[] args) throws Exception {
        List<AclBinding> bindings = new ArrayList<>();
        for (int i = 2; i + 3 < args.length; i += 4) {
            ResourcePattern resource = new ResourcePattern(
                ResourceType.valueOf(args[i]), args[i + 2], PatternType.valueOf(args[i + 1]));
            AccessControlEntry entry = new AccessControlEntry(
                args[1], "*", AclOperation.valueOf(args[i + 3]), AclPermissionType.ALLOW);
            bindings.add(new AclBinding(resource, entry));
        }
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]))) {
            admin.createAcls(bindings).all().get();
            while (true) {
                Set<AclBinding> seen = new HashSet<>(admin.describeAcls(AclBindingFilter.ANY).values().get());
                if (seen.containsAll(bindings)) {
                    return;
                }
                Thread.sleep(20);
            }
        }
    }
}
