package io.github.ratelimit.servlet.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * HTTP/1.1 over a plain socket, sending exactly the bytes a test writes: repeated header lines, odd methods, raw
 * bytes. Each request uses its own connection ({@code Connection: close}), so the response ends with the stream.
 */
public final class RawHttp {

    /** A response: status, headers in order, body. */
    public record Response(int status, List<String[]> headers, String body) {

        /** @return the first value of the header, case-insensitive, or {@code null} */
        public String header(String name) {
            for (String[] h : headers) {
                if (h[0].equalsIgnoreCase(name)) {
                    return h[1];
                }
            }
            return null;
        }
    }

    private RawHttp() {}

    /**
     * @param port the server's port on 127.0.0.1
     * @param method the request method, sent as is
     * @param target the request target, sent as is
     * @param headerLines header lines without line ends ({@code "X-Forwarded-For: 203.0.113.7"}), sent as is
     * @return the response
     */
    public static Response send(int port, String method, String target, List<String> headerLines) throws IOException {
        return sendFrom(null, port, method, target, headerLines.toArray(String[]::new));
    }

    /**
     * As {@link #send(int, String, String, String...)}, from a local address of the test's choosing, so the server sees
     * another socket peer: {@code 127.0.0.2} is a loopback address too, but not {@code 127.0.0.1}.
     *
     * @param localAddress the address the connection comes from, e.g. {@code 127.0.0.2}; {@code null} for any
     * @param port the server's port on 127.0.0.1
     * @param method the request method, sent as is
     * @param target the request target, sent as is
     * @param headerLines header lines without line ends, sent as is
     * @return the response
     */
    public static Response sendFrom(String localAddress, int port, String method, String target, String... headerLines)
            throws IOException {
        StringBuilder head = new StringBuilder();
        head.append(method).append(' ').append(target).append(" HTTP/1.1\r\n");
        head.append("Host: 127.0.0.1:").append(port).append("\r\n");
        for (String line : headerLines) {
            head.append(line).append("\r\n");
        }
        head.append("Connection: close\r\n\r\n");
        return sendBytes(localAddress, port, head.toString().getBytes(StandardCharsets.ISO_8859_1));
    }

    /** @see #send(int, String, String, List) */
    public static Response send(int port, String method, String target, String... headerLines) throws IOException {
        return send(port, method, target, List.of(headerLines));
    }

    /**
     * @param port the server's port on 127.0.0.1
     * @param request the whole request, bytes as they go on the wire
     * @return the response; status 0 when the server closed the connection without one
     */
    public static Response sendBytes(int port, byte[] request) throws IOException {
        return sendBytes(null, port, request);
    }

    private static Response sendBytes(String localAddress, int port, byte[] request) throws IOException {
        try (Socket socket = new Socket()) {
            if (localAddress != null) {
                socket.bind(new InetSocketAddress(localAddress, 0));
            }
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            socket.setSoTimeout(15_000);
            OutputStream out = socket.getOutputStream();
            out.write(request);
            out.flush();
            return parse(socket.getInputStream());
        }
    }

    private static Response parse(InputStream in) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        byte[] buffer = new byte[8192];
        int n;
        try {
            while ((n = in.read(buffer)) >= 0) {
                all.write(buffer, 0, n);
            }
        } catch (java.net.SocketException e) {
            // A reset after the response was written still leaves the response readable.
        }
        String text = all.toString(StandardCharsets.ISO_8859_1);
        int headEnd = text.indexOf("\r\n\r\n");
        if (text.isEmpty() || headEnd < 0) {
            return new Response(0, List.of(), text);
        }
        String[] lines = text.substring(0, headEnd).split("\r\n");
        String[] statusLine = lines[0].split(" ", 3);
        int status = Integer.parseInt(statusLine[1]);
        List<String[]> headers = new ArrayList<>();
        boolean chunked = false;
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0) {
                String name = lines[i].substring(0, colon).trim();
                String value = lines[i].substring(colon + 1).trim();
                headers.add(new String[] {name, value});
                if (name.equalsIgnoreCase("Transfer-Encoding")
                        && value.toLowerCase(Locale.ROOT).contains("chunked")) {
                    chunked = true;
                }
            }
        }
        String body = text.substring(headEnd + 4);
        return new Response(status, headers, chunked ? dechunk(body) : body);
    }

    private static String dechunk(String body) {
        StringBuilder out = new StringBuilder();
        int i = 0;
        while (i < body.length()) {
            int lineEnd = body.indexOf("\r\n", i);
            if (lineEnd < 0) {
                break;
            }
            String sizeText = body.substring(i, lineEnd).trim();
            int semicolon = sizeText.indexOf(';');
            int size = Integer.parseInt(semicolon >= 0 ? sizeText.substring(0, semicolon) : sizeText, 16);
            if (size == 0) {
                break;
            }
            out.append(body, lineEnd + 2, Math.min(body.length(), lineEnd + 2 + size));
            i = lineEnd + 2 + size + 2;
        }
        return out.toString();
    }
}
