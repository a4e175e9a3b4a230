// Starts a real Neo4j (Neo4j's test harness: the community server in this JVM) with a Bolt connector on
// 127.0.0.1 at a port the kernel picks, no HTTP server, authentication off, and its data in args[0].
// Prints "BOLT <uri>" once it accepts connections, and stops when its standard input closes, so a test
// that dies (its pipe closes) cannot leave it running. test/helpers/neo4j.ts is the one caller.
import java.nio.file.Path;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.harness.Neo4j;
import org.neo4j.harness.Neo4jBuilders;

public final class Neo4jLauncher {
  public static void main(String[] args) throws Exception {
    Neo4j neo4j = Neo4jBuilders.newInProcessBuilder(Path.of(args[0]))
        .withDisabledServer()
        .withConfig(BoltConnector.enabled, true)
        .withConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", 0))
        .withConfig(GraphDatabaseSettings.auth_enabled, false)
        .withConfig(GraphDatabaseSettings.pagecache_memory, 64L * 1024 * 1024)
        .build();
    System.out.println("BOLT " + neo4j.boltURI());
    System.out.flush();
    while (System.in.read() != -1) {
      // Nothing is read from the pipe; its end is the stop signal.
    }
    neo4j.close();
    System.out.println("STOPPED");
  }
}
