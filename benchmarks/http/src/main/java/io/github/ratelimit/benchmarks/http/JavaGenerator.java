package io.github.ratelimit.benchmarks.http;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A closed-loop load generator of its own, for machines without wrk: one thread per keep-alive connection, a plain
 * HTTP/1.1 GET over a socket, the response read to its end (Content-Length or chunked). Latency samples are kept
 * per thread (up to a few million), so percentiles are exact.
 */
final class JavaGenerator implements Load.Generator {

    private static final int MAX_SAMPLES = 4_000_000;

    @Override
    public String name() {
        return "Java closed loop (one thread per keep-alive connection)";
    }

    @Override
    public Load run(String host, int port, String path, int connections, int seconds) throws Exception {
        byte[] request = ("GET " + path + " HTTP/1.1\r\nHost: " + host + ":" + port
                        + "\r\nConnection: keep-alive\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        AtomicLong failed = new AtomicLong();
        List<long[]> samples = new ArrayList<>();
        int[] counts = new int[connections];
        List<Thread> threads = new ArrayList<>();
        long start = System.nanoTime();
        for (int c = 0; c < connections; c++) {
            long[] mine = new long[MAX_SAMPLES / connections];
            samples.add(mine);
            int index = c;
            Thread t = new Thread(
                    () -> {
                        int n = 0;
                        while (System.nanoTime() < end) {
                            try (Socket socket = new Socket()) {
                                socket.setTcpNoDelay(true);
                                socket.connect(new InetSocketAddress(host, port), 5_000);
                                socket.setSoTimeout(10_000);
                                OutputStream out = socket.getOutputStream();
                                InputStream in = new BufferedInputStream(socket.getInputStream());
                                while (System.nanoTime() < end) {
                                    long sent = System.nanoTime();
                                    out.write(request);
                                    out.flush();
                                    Response response = readResponse(in);
                                    long took = System.nanoTime() - sent;
                                    if (response.status() < 200 || response.status() >= 300) {
                                        failed.incrementAndGet();
                                    }
                                    if (n < mine.length) {
                                        mine[n] = took;
                                    }
                                    n++;
                                    if (response.close()) {
                                        break; // the server ends the connection (Tomcat after 100 requests): a new one
                                    }
                                }
                            } catch (IOException e) {
                                failed.incrementAndGet();
                            }
                        }
                        counts[index] = n;
                    },
                    "load-" + c);
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        double elapsed = (System.nanoTime() - start) / 1e9;
        long total = 0;
        int kept = 0;
        for (int c = 0; c < connections; c++) {
            total += counts[c];
            kept += Math.min(counts[c], samples.get(c).length);
        }
        long[] all = new long[kept];
        int k = 0;
        for (int c = 0; c < connections; c++) {
            int n = Math.min(counts[c], samples.get(c).length);
            System.arraycopy(samples.get(c), 0, all, k, n);
            k += n;
        }
        Arrays.sort(all);
        return new Load(
                total / elapsed,
                percentile(all, 0.50) / 1e3,
                percentile(all, 0.99) / 1e3,
                all.length == 0 ? Double.NaN : all[all.length - 1] / 1e3,
                failed.get());
    }

    private static double percentile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        return sorted[(int) Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
    }

    /** A response's status, and whether the server closes the connection after it ({@code Connection: close}). */
    private record Response(int status, boolean close) {}

    /** Reads one response. */
    private static Response readResponse(InputStream in) throws IOException {
        String status = line(in);
        if (status == null || !status.startsWith("HTTP/1.")) {
            throw new IOException("not an HTTP response: " + status);
        }
        int code = Integer.parseInt(status.substring(9, 12));
        long length = -1;
        boolean chunked = false;
        boolean close = false;
        for (String header = line(in); header != null && !header.isEmpty(); header = line(in)) {
            String lower = header.toLowerCase(Locale.ROOT);
            if (lower.startsWith("content-length:")) {
                length = Long.parseLong(lower.substring(15).trim());
            } else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
                chunked = true;
            } else if (lower.startsWith("connection:") && lower.contains("close")) {
                close = true;
            }
        }
        if (chunked) {
            for (long size = Long.parseLong(line(in).trim(), 16);
                    size > 0;
                    size = Long.parseLong(line(in).trim(), 16)) {
                skip(in, size);
                line(in);
            }
            line(in);
        } else if (length > 0) {
            skip(in, length);
        }
        return new Response(code, close);
    }

    private static void skip(InputStream in, long n) throws IOException {
        for (long left = n; left > 0; ) {
            long skipped = in.skip(left);
            if (skipped <= 0) {
                if (in.read() < 0) {
                    throw new IOException("connection closed in a body");
                }
                skipped = 1;
            }
            left -= skipped;
        }
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder(64);
        for (int b = in.read(); b >= 0; b = in.read()) {
            if (b == '\n') {
                int len = sb.length();
                return len > 0 && sb.charAt(len - 1) == '\r' ? sb.substring(0, len - 1) : sb.toString();
            }
            sb.append((char) b);
        }
        if (sb.length() == 0) {
            throw new IOException("connection closed");
        }
        return sb.toString();
    }
}
