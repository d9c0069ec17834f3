package io.github.ratelimit.testing.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * A TCP proxy on a loopback port in front of a server (a {@link RedisServer}), which holds everything a client sends
 * for a fixed delay before passing it on, in order. Each round trip through it takes that much longer, so a test can
 * tell one round trip from two by the time a request takes, as a server across a network would show it. Replies pass
 * at once. It also counts the chunks clients sent (a pipeline written at once arrives as one chunk).
 *
 * <p>Each connection uses three daemon threads; {@link #close} closes every socket, which ends them.
 */
public final class DelayingProxy implements AutoCloseable {

    private static final byte[] END = new byte[0];

    private final ServerSocket server;
    private final InetSocketAddress upstream;
    /** The delay of each chunk a client sends, in nanoseconds. */
    private volatile LongSupplier delays;

    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final LongAdder chunks = new LongAdder();
    private final LongAdder held = new LongAdder();
    private volatile boolean closed;

    private DelayingProxy(InetSocketAddress upstream, Duration delay) throws IOException {
        this.upstream = upstream;
        long nanos = delay.toNanos();
        this.delays = () -> nanos;
        this.server = new ServerSocket(0, 50, InetAddress.getByName(Ports.LOOPBACK));
        Thread acceptor = new Thread(this::accept, "delaying-proxy-accept-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * @param host the server's host
     * @param port the server's port
     * @param delay how long to hold what clients send, at least zero
     * @return a proxy listening on a free loopback port
     */
    public static DelayingProxy start(String host, int port, Duration delay) {
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delay " + delay + " is negative");
        }
        try {
            return new DelayingProxy(new InetSocketAddress(host, port), delay);
        } catch (IOException e) {
            throw new RedisHarnessException("Could not open the delaying proxy's port: " + e);
        }
    }

    /** @return the loopback port clients connect to */
    public int port() {
        return server.getLocalPort();
    }

    /**
     * Changes the delay of what clients send from now on (what is held keeps its time).
     *
     * @param delay how long to hold what clients send, at least zero
     */
    public void delay(Duration delay) {
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delay " + delay + " is negative");
        }
        long nanos = delay.toNanos();
        this.delays = () -> nanos;
    }

    /**
     * Holds each chunk clients send from now on for a delay of its own (a slow store's spread of latencies); chunks
     * still go on in the order they came, so one held longer holds those behind it too.
     *
     * @param nanos the delay of the next chunk, in nanoseconds, at least zero; called on the proxy's threads
     */
    public void delays(LongSupplier nanos) {
        this.delays = Objects.requireNonNull(nanos, "nanos");
    }

    /**
     * @return the chunks clients sent that the proxy holds still, not yet passed on (what a client sent before it gave
     *         up waiting is passed on all the same: 0 means the server has been sent everything)
     */
    public long held() {
        return held.sum();
    }

    /** @return the chunks clients have sent through the proxy so far */
    public long chunks() {
        return chunks.sum();
    }

    private void accept() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            Socket target = new Socket();
            try {
                client.setTcpNoDelay(true);
                target.setTcpNoDelay(true);
                target.connect(upstream, 5_000);
            } catch (IOException e) {
                closeQuietly(client);
                closeQuietly(target);
                continue;
            }
            sockets.add(client);
            sockets.add(target);
            if (closed) {
                closeQuietly(client);
                closeQuietly(target);
                return;
            }
            BlockingQueue<Chunk> held = new LinkedBlockingQueue<>();
            daemon("delaying-proxy-read", () -> read(client, target, held));
            daemon("delaying-proxy-write", () -> writeWhenDue(held, target, client));
            daemon("delaying-proxy-reply", () -> copy(target, client));
        }
    }

    /** What a client sent, and when it may go on. */
    private record Chunk(byte[] bytes, long dueNanos) {}

    private void read(Socket client, Socket target, BlockingQueue<Chunk> held) {
        byte[] buffer = new byte[64 * 1024];
        try (InputStream in = client.getInputStream()) {
            for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                chunks.increment();
                this.held.increment();
                held.add(new Chunk(Arrays.copyOf(buffer, n), System.nanoTime() + Math.max(0, delays.getAsLong())));
            }
        } catch (IOException e) {
            // the connection ended
        } finally {
            held.add(new Chunk(END, 0));
        }
    }

    private void writeWhenDue(BlockingQueue<Chunk> held, Socket target, Socket client) {
        try (OutputStream out = target.getOutputStream()) {
            while (true) {
                Chunk chunk = held.take();
                if (chunk.bytes() == END) {
                    return;
                }
                for (long left = chunk.dueNanos() - System.nanoTime();
                        left > 0;
                        left = chunk.dueNanos() - System.nanoTime()) {
                    LockSupport.parkNanos(left);
                }
                try {
                    out.write(chunk.bytes());
                    out.flush();
                } finally {
                    this.held.decrement();
                }
            }
        } catch (IOException e) {
            closeQuietly(client);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            closeQuietly(target);
        }
    }

    private static void copy(Socket from, Socket to) {
        byte[] buffer = new byte[64 * 1024];
        try (InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream()) {
            for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // the connection ended
        } finally {
            closeQuietly(to);
            closeQuietly(from);
        }
    }

    private static void daemon(String name, Runnable task) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        thread.start();
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    /** Stops accepting and closes every connection. */
    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        sockets.forEach(DelayingProxy::closeQuietly);
        sockets.clear();
    }
}
