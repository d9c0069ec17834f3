package io.github.ratelimit.spring.boot.autoconfigure;

import io.github.ratelimit.spring.boot.web.servlet.TomcatClientConnections;
import io.github.ratelimit.servlet.ClientConnections;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Boot's embedded Tomcat: a valve that lets the rate-limit filters see the client of a request waiting out a
 * {@code SOFT} delay go away, so its tokens come back ({@link TomcatClientConnections}). On another server the
 * valve is never installed, never sees a request, and the filters' waits run to their end. A {@link
 * ClientConnections} bean of the application's replaces it.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = {"org.apache.catalina.valves.ValveBase",
        "org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory"})
class TomcatConnectionsConfiguration {

    @Bean
    @ConditionalOnMissingBean(ClientConnections.class)
    static TomcatClientConnections rateLimitTomcatClientConnections() {
        return new TomcatClientConnections();
    }

    @Bean
    static WebServerFactoryCustomizer<TomcatServletWebServerFactory> rateLimitTomcatClientConnectionsValve(
            org.springframework.beans.factory.ObjectProvider<TomcatClientConnections> valve) {
        return factory -> valve.ifAvailable(factory::addContextValves);
    }
}
