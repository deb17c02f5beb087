package streamctl.testing.plugins;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;

import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.auth.login.AppConfigurationEntry;

import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.security.auth.AuthenticateCallbackHandler;
import org.apache.kafka.common.security.scram.ScramExtensionsCallback;

/**
 * A SASL client callback handler written the way third-party ones are (AWS MSK IAM, OAuth
 * providers): against Kafka's own {@code org.apache.kafka} interface, with credentials it finds
 * itself. It answers the SASL/PLAIN and SCRAM name and password callbacks from a file holding
 * {@code user:password}, named by the client setting {@code streamctl.test.credentials.file}; the
 * JAAS config then carries no credentials, so a client authenticates only if it loaded this class.
 *
 * <pre>
 * kafka.sasl.client.callback.handler.class = streamctl.testing.plugins.FileCredentialsCallbackHandler
 * kafka.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required;
 * kafka.streamctl.test.credentials.file = /tmp/credentials
 * </pre>
 */
public class FileCredentialsCallbackHandler implements AuthenticateCallbackHandler {
  public static final String FILE_CONFIG = "streamctl.test.credentials.file";

  private String user;
  private char[] password;

  @Override
  public void configure(Map<String, ?> configs, String saslMechanism, List<AppConfigurationEntry> jaasConfigEntries) {
    Object file = configs.get(FILE_CONFIG);
    if (file == null) throw new KafkaException(getClass().getSimpleName() + " needs client setting " + FILE_CONFIG);
    try {
      String text = new String(Files.readAllBytes(Paths.get(file.toString())), StandardCharsets.UTF_8).trim();
      int colon = text.indexOf(':');
      user = text.substring(0, colon);
      password = text.substring(colon + 1).toCharArray();
    } catch (IOException | IndexOutOfBoundsException e) {
      throw new KafkaException("Cannot read user:password from " + file, e);
    }
  }

  @Override
  public void handle(Callback[] callbacks) throws UnsupportedCallbackException {
    for (Callback callback : callbacks) {
      if (callback instanceof NameCallback) ((NameCallback) callback).setName(user);
      else if (callback instanceof PasswordCallback) ((PasswordCallback) callback).setPassword(password);
      // SCRAM also asks for extensions; having none is the answer.
      else if (!(callback instanceof ScramExtensionsCallback)) throw new UnsupportedCallbackException(callback);
    }
  }

  @Override
  public void close() {}
}
