package io.github.ratelimit.gateway;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/** The service behind the gateway in tests: a Reactor Netty server on a free port that answers every path. */
final class Upstream implements AutoCloseable {

    private final DisposableServer server;

    private Upstream(DisposableServer server) {
        this.server = server;
    }

    static Upstream start() {
        return new Upstream(HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .handle((request, response) -> response.sendString(Mono.just("upstream " + request.uri())))
                .bindNow());
    }

    String uri() {
        return "http://127.0.0.1:" + server.port();
    }

    @Override
    public void close() {
        server.disposeNow();
    }
}
