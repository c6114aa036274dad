// Drives dpproxy through MariaDB Connector/J, as a JDBC tool would: the
// driver's own connect-time queries (many @@ variables), metadata, a
// prepared statement, and a refusal. Prints key=value lines.
import java.sql.*;

public class ConnectorJ {
    public static void main(String[] args) throws Exception {
        String url = "jdbc:mariadb://" + args[0] + ":" + args[1] + "/" + args[4] + "?useSsl=false";
        try (Connection c = DriverManager.getConnection(url, args[2], args[3])) {
            try (Statement s = c.createStatement()) {
                s.execute("SET dp_epsilon = 100000");
                try (ResultSet rs = s.executeQuery("SELECT sex, COUNT(*) AS n FROM adult GROUP BY sex")) {
                    int groups = 0;
                    while (rs.next()) groups++;
                    System.out.println("groups=" + groups);
                }
            }
            try (PreparedStatement p = c.prepareStatement("SELECT COUNT(*) FROM adult WHERE age > ?")) {
                for (int i = 0; i < 6; i++) {
                    p.setInt(1, 30 + i);
                    try (ResultSet rs = p.executeQuery()) {
                        rs.next();
                        System.out.println("prepared" + i + "=" + rs.getLong(1));
                    }
                }
            }
            DatabaseMetaData md = c.getMetaData();
            try (ResultSet rs = md.getTables(args[4], null, "%", new String[] {"TABLE"})) {
                StringBuilder b = new StringBuilder();
                while (rs.next()) b.append(rs.getString("TABLE_NAME")).append(',');
                System.out.println("tables=" + b);
            }
            try (ResultSet rs = md.getColumns(args[4], null, "adult", "%")) {
                int n = 0;
                while (rs.next()) n++;
                System.out.println("columns=" + n);
            }
            try (Statement s = c.createStatement()) {
                s.executeQuery("SELECT * FROM adult");
                System.out.println("refused=0");
            } catch (SQLException e) {
                System.out.println("refused=" + e.getErrorCode());
            }
        }
    }
}
