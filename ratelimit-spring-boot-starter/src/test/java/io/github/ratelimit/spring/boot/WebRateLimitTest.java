package io.github.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.spring.boot.autoconfigure.RateLimitAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** A whole auto-configured web application: annotated controllers and URL rules answer alike. */
@SpringBootTest(
        classes = WebRateLimitTest.App.class,
        properties = {
            "ratelimit.rules[0].name=api",
            "ratelimit.rules[0].paths=/api/**",
            "ratelimit.rules[0].key=ip",
            "ratelimit.rules[0].limits=3/1m"
        })
@AutoConfigureMockMvc
class WebRateLimitTest {

    @SpringBootApplication
    static class App {

        /** The limiter's clock: time stands still unless the test moves it. */
        @org.springframework.context.annotation.Bean(RateLimitAutoConfiguration.TIME_METER_BEAN)
        io.github.ratelimit.testing.ManualClock rateLimitTimeMeter() {
            return new io.github.ratelimit.testing.ManualClock();
        }

        @RestController
        static class HelloController {

            @GetMapping("/hello")
            @RateLimit(name = "hello", key = "ip", perSecond = 5, perMinute = 100)
            String hello() {
                return "hello";
            }

            @GetMapping("/api/ping")
            String ping() {
                return "pong";
            }
        }
    }

    @Autowired
    MockMvc mvc;

    private MvcResult call(String path, String ip) throws Exception {
        return mvc.perform(get(path).with(request -> {
                    request.setRemoteAddr(ip);
                    return request;
                }))
                .andReturn();
    }

    @Test
    void answersTheSixthCallOfAnAnnotatedControllerWith429AndTheFiltersBody() throws Exception {
        for (int i = 0; i < 5; i++) {
            MvcResult ok = call("/hello", "203.0.113.10");
            assertThat(ok.getResponse().getStatus()).isEqualTo(200);
            assertThat(ok.getResponse().getHeader("X-RateLimit-Remaining")).isEqualTo(String.valueOf(4 - i));
            assertThat(ok.getResponse().getHeader("RateLimit-Policy"))
                    .isEqualTo("\"hello-1s\";q=5;w=1, \"hello-1m\";q=100;w=60");
        }
        MvcResult rejected = call("/hello", "203.0.113.10");
        assertThat(rejected.getResponse().getStatus()).isEqualTo(429);
        assertThat(rejected.getResponse().getHeader("Retry-After")).isEqualTo("1");
        assertThat(rejected.getResponse().getContentType()).startsWith("application/problem+json");
        assertThat(rejected.getResponse().getContentAsString())
                .isEqualTo("{\"type\":\"about:blank\",\"title\":"
                        + "\"Too Many Requests\",\"status\":429,\"detail\":\"Rate limit of rule 'hello' exceeded; retry after 1 s.\","
                        + "\"instance\":\"/hello\",\"retryAfter\":1}");
        assertThat(call("/hello", "203.0.113.11").getResponse().getStatus()).isEqualTo(200);
    }

    @Test
    void enforcesUrlRulesFromPropertiesThroughTheFilter() throws Exception {
        for (int i = 0; i < 3; i++) {
            assertThat(call("/api/ping", "198.51.100.20").getResponse().getStatus())
                    .isEqualTo(200);
        }
        MvcResult rejected = call("/api/ping", "198.51.100.20");
        assertThat(rejected.getResponse().getStatus()).isEqualTo(429);
        assertThat(rejected.getResponse().getContentAsString())
                .contains("\"detail\":\"Rate limit of rule 'api' exceeded");
    }
}
