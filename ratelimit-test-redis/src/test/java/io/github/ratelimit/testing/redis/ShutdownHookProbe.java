package io.github.ratelimit.testing.redis;

/** Run in a child JVM: starts a server, never closes it, exits. The shutdown hook must kill it. */
public final class ShutdownHookProbe {

    private ShutdownHookProbe() {}

    public static void main(String[] args) {
        RedisServer server = RedisServer.start();
        System.out.println(
                "READY pid=" + server.pid() + " dir=" + server.logFile().getParent());
        System.out.flush();
        System.exit(0);
    }
}
