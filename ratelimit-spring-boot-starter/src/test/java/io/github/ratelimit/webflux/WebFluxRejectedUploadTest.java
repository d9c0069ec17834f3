package io.github.ratelimit.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * A rejected request's body is read before the 429 is sent (answered earlier, the next request on a keep-alive
 * connection now and then went unanswered), but only so much of it: a client that announces 10 MB and sends 256 KB
 * hears 429 without sending the rest (before the bound, the filter waited for the whole body).
 */
class WebFluxRejectedUploadTest {

    private static ConfigurableApplicationContext context;
    private static int port;

    @BeforeAll
    static void start() {
        context = WebFluxApps.start(
                App.class,
                "ratelimit.rules[0].name=wfu-none",
                "ratelimit.rules[0].paths=/wfu/**",
                "ratelimit.rules[0].key=global",
                "ratelimit.rules[0].limits=1/1h");
        port = ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    @AfterAll
    static void stop() {
        context.close();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Handler.class)
    static class App {}

    @RestController
    static class Handler {
        @PostMapping("/wfu/upload")
        Mono<String> upload(@RequestBody Mono<byte[]> body) {
            return body.map(b -> "got " + b.length);
        }
    }

    private static String post(int announced, int sent) throws Exception {
        try (Socket socket = new Socket("localhost", port)) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(("POST /wfu/upload HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\n"
                            + "Content-Length: " + announced + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            byte[] chunk = new byte[8192];
            for (int done = 0; done < sent; done += chunk.length) {
                out.write(chunk, 0, Math.min(chunk.length, sent - done));
            }
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] status = new byte[12];
            int n = 0;
            while (n < status.length) {
                int r = in.read(status, n, status.length - n);
                if (r < 0) {
                    break;
                }
                n += r;
            }
            return new String(status, 0, n, StandardCharsets.US_ASCII);
        }
    }

    @Test
    void aRejectedUploadIsAnsweredWithoutWaitingForAllOfIt() throws Exception {
        assertThat(post(16, 16)).isEqualTo("HTTP/1.1 200");
        // The rule is spent: this one is rejected, and answered though most of its body never comes.
        assertThat(post(10 * 1024 * 1024, 256 * 1024)).isEqualTo("HTTP/1.1 429");
    }
}
