package io.github.ratelimit.samples.gateway;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The service behind the gateway. A real deployment routes to another process; to keep the sample one command, a
 * small Reactor Netty server on a free loopback port inside this JVM stands in for it. The gateway reaches it over
 * HTTP like any upstream, and it knows nothing of rate limits.
 */
@Configuration(proxyBeanMethods = false)
class Upstream {

    @Bean(destroyMethod = "disposeNow")
    DisposableServer upstreamServer() {
        return HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .route(routes -> routes.get(
                                "/api/hello", (request, response) -> response.sendString(Mono.just("hello\n")))
                        .get("/api/status", (request, response) -> response.sendString(Mono.just("up\n"))))
                .bindNow();
    }
}
