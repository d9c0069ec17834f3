package io.github.ratelimit.benchmarks.redis;

import java.util.HashMap;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * One {@code INFO all} of the Redis server: per-command call counts ({@code commandstats}), replies written
 * ({@code total_writes_processed}), {@code used_memory}, the server's CPU time ({@code used_cpu_sys} +
 * {@code used_cpu_user}) and keys per database ({@code keyspace}).
 *
 * <p>Mind that {@code commandstats} also counts the commands a Lua script runs ({@code redis.call('GET', ...)}
 * inside an EVALSHA adds one to {@code cmdstat_get}); {@link Subject#roundTrips} accounts for that.
 */
final class ServerCounters {

    private final Map<String, long[]> commands; // name -> {calls, failed_calls}
    private final long repliesWritten;
    private final long expiredKeys;
    private final long usedMemory;
    private final double cpuSeconds;
    private final Map<Integer, long[]> keyspace; // db -> {keys, expires}

    private ServerCounters(
            Map<String, long[]> commands,
            long repliesWritten,
            long expiredKeys,
            long usedMemory,
            double cpuSeconds,
            Map<Integer, long[]> keyspace) {
        this.commands = commands;
        this.repliesWritten = repliesWritten;
        this.expiredKeys = expiredKeys;
        this.usedMemory = usedMemory;
        this.cpuSeconds = cpuSeconds;
        this.keyspace = keyspace;
    }

    /**
     * @param info the text of {@code INFO all}
     * @return the counters in it
     */
    static ServerCounters parse(String info) {
        Map<String, long[]> commands = new HashMap<>();
        Map<Integer, long[]> keyspace = new HashMap<>();
        long writes = 0;
        long expired = 0;
        long memory = 0;
        double cpu = 0;
        for (String raw : info.split("\r?\n")) {
            String line = raw.strip();
            int colon = line.indexOf(':');
            if (line.startsWith("#") || colon < 0) {
                continue;
            }
            String name = line.substring(0, colon);
            String value = line.substring(colon + 1);
            if (name.startsWith("cmdstat_")) {
                Map<String, String> fields = fields(value);
                commands.put(
                        name.substring("cmdstat_".length()),
                        new long[] {number(fields.get("calls")), number(fields.get("failed_calls"))});
            } else if (name.equals("total_writes_processed")) {
                writes = number(value);
            } else if (name.equals("expired_keys")) {
                expired = number(value);
            } else if (name.equals("used_memory")) {
                memory = number(value);
            } else if (name.equals("used_cpu_sys") || name.equals("used_cpu_user")) {
                cpu += Double.parseDouble(value.strip());
            } else if (name.matches("db\\d+")) {
                Map<String, String> fields = fields(value);
                keyspace.put(
                        Integer.parseInt(name.substring(2)),
                        new long[] {number(fields.get("keys")), number(fields.get("expires"))});
            }
        }
        return new ServerCounters(commands, writes, expired, memory, cpu, keyspace);
    }

    /**
     * @param before an earlier snapshot of the same server
     * @return what changed since then
     */
    Delta since(ServerCounters before) {
        return new Delta(before, this);
    }

    private long sumCalls(Predicate<String> which) {
        long sum = 0;
        for (Map.Entry<String, long[]> e : commands.entrySet()) {
            if (which.test(e.getKey())) {
                sum += e.getValue()[0];
            }
        }
        return sum;
    }

    private long calls(String command) {
        long[] c = commands.get(command);
        return c == null ? 0 : c[0];
    }

    private long failed(String command) {
        long[] c = commands.get(command);
        return c == null ? 0 : c[1];
    }

    private long keys(int db, int field) {
        long[] k = keyspace.get(db);
        return k == null ? 0 : k[field];
    }

    private static Map<String, String> fields(String value) {
        Map<String, String> fields = new HashMap<>();
        for (String pair : value.split(",")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                fields.put(pair.substring(0, eq), pair.substring(eq + 1));
            }
        }
        return fields;
    }

    private static long number(String text) {
        if (text == null || text.isEmpty()) {
            return 0;
        }
        return Long.parseLong(text.strip());
    }

    /** The change between two snapshots. */
    static final class Delta {
        private final ServerCounters before;
        private final ServerCounters after;

        private Delta(ServerCounters before, ServerCounters after) {
            this.before = before;
            this.after = after;
        }

        /** @return calls of a command (lower case, e.g. {@code evalsha}), including failed ones */
        long calls(String command) {
            return after.calls(command) - before.calls(command);
        }

        /** @return calls of a command that failed (e.g. EVALSHA answered NOSCRIPT) */
        long failed(String command) {
            return after.failed(command) - before.failed(command);
        }

        /**
         * @param which the commands to count, by their commandstats name (lower case; a subcommand reads
         *        {@code client|setname})
         * @return calls of those commands, failed ones included
         */
        long calls(Predicate<String> which) {
            return after.sumCalls(which) - before.sumCalls(which);
        }

        /**
         * @param which the commands to count, by their commandstats name
         * @return calls of each of those commands that was called at all, by name, sorted by name
         */
        SortedMap<String, Long> callsByCommand(Predicate<String> which) {
            SortedMap<String, Long> calls = new TreeMap<>();
            for (String command : after.commands.keySet()) {
                long n = calls(command);
                if (n > 0 && which.test(command)) {
                    calls.put(command, n);
                }
            }
            return calls;
        }

        /** @return calls of a command that did not fail */
        long succeeded(String command) {
            return calls(command) - failed(command);
        }

        /**
         * Replies Redis wrote to clients, less the reply to the INFO that took the first snapshot. A client that
         * does not pipeline gets one reply per command it sent, and a reply is one write unless the socket buffer
         * fills, so this counts client round trips independently of {@code commandstats}.
         */
        long replies() {
            return after.repliesWritten - before.repliesWritten - 1;
        }

        /** @return keys Redis deleted because their time to live ran out */
        long expiredKeys() {
            return after.expiredKeys - before.expiredKeys;
        }

        /** @return CPU time the Redis server used (all its threads, user and system), in nanoseconds */
        long cpuNanos() {
            return Math.round((after.cpuSeconds - before.cpuSeconds) * 1e9);
        }

        /** @return the change in {@code used_memory}, in bytes */
        long usedMemory() {
            return after.usedMemory - before.usedMemory;
        }

        /** @return the change in the number of keys of a database */
        long keys(int db) {
            return after.keys(db, 0) - before.keys(db, 0);
        }

        /** @return the change in the number of keys with a time to live, of a database */
        long expires(int db) {
            return after.keys(db, 1) - before.keys(db, 1);
        }
    }
}
