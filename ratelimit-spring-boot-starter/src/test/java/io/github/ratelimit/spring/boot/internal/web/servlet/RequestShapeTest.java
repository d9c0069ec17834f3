package io.github.ratelimit.spring.boot.internal.web.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletRequest;

/**
 * A request's shape holds everything Spring MVC's handler lookup reads of it, so two requests that may reach
 * different handlers never share one; a request whose shape would be large has none, and is looked up every time.
 */
class RequestShapeTest {

    private static MockHttpServletRequest request(String method, String uri, String[] accept, String... contentType) {
        ContainerRequest request = new ContainerRequest(null, method, uri);
        for (String line : accept) {
            request.addHeader("Accept", line);
        }
        for (String line : contentType) {
            request.addContentType(line);
        }
        return request;
    }

    private static RequestShape get(String... accept) {
        return RequestShape.of(request("GET", "/api/x", accept));
    }

    private static String[] lines(String... lines) {
        return lines;
    }

    @Test
    void equalRequestsHaveEqualShapes() {
        assertThat(get("application/json")).isEqualTo(get("application/json")).isNotNull();
        assertThat(get()).isEqualTo(get()).isNotNull();
        assertThat(get("text/plain;q=0.35", "application/json"))
                .isEqualTo(get("text/plain;q=0.35", "application/json"));
    }

    @Test
    void everyAcceptLineCountsInOrder() {
        assertThat(get("text/plain;q=0.35", "application/json"))
                .as("a second line")
                .isNotEqualTo(get("text/plain;q=0.35"));
        assertThat(get("text/plain", "application/json"))
                .as("the order")
                .isNotEqualTo(get("application/json", "text/plain"));
        assertThat(get("text/plain", "text/plain")).as("a repeated line").isNotEqualTo(get("text/plain"));
        assertThat(get("")).as("an empty line is not an absent header").isNotEqualTo(get());
        assertThat(get("application/json")).isNotEqualTo(get("text/csv"));
    }

    @Test
    void everyContentTypeLineCountsInOrderAndSoDoesWhetherThereIsABody() {
        RequestShape json = RequestShape.of(request("POST", "/api/x", lines(), "application/json"));
        assertThat(json)
                .isNotEqualTo(RequestShape.of(request("POST", "/api/x", lines())))
                .isNotEqualTo(RequestShape.of(request("POST", "/api/x", lines(), "text/plain")))
                .isNotEqualTo(RequestShape.of(request("POST", "/api/x", lines(), "application/json", "text/plain")))
                .isNotEqualTo(RequestShape.of(request("GET", "/api/x", lines(), "application/json")));
        assertThat(RequestShape.of(request("POST", "/api/x", lines(), "text/plain", "application/json")))
                .isNotEqualTo(RequestShape.of(request("POST", "/api/x", lines(), "text/plain", "text/csv")));

        MockHttpServletRequest withBody = request("POST", "/api/x", lines(), "text/plain");
        withBody.addHeader("Content-Length", "4");
        MockHttpServletRequest chunked = request("POST", "/api/x", lines(), "text/plain");
        chunked.addHeader("Transfer-Encoding", "chunked");
        MockHttpServletRequest emptyBody = request("POST", "/api/x", lines(), "text/plain");
        emptyBody.addHeader("Content-Length", " 0 ");
        RequestShape none = RequestShape.of(request("POST", "/api/x", lines(), "text/plain"));
        assertThat(RequestShape.of(withBody)).isNotEqualTo(none).isEqualTo(RequestShape.of(chunked));
        assertThat(RequestShape.of(emptyBody))
                .as("a body of length 0 is none, as Spring reads it")
                .isEqualTo(none);
    }

    @Test
    void thePathAsSpringParsesItCounts() {
        MockHttpServletRequest app = request("GET", "/app/api/x", lines());
        app.setContextPath("/app");
        MockHttpServletRequest servlet = request("GET", "/app/api/x", lines());
        servlet.setServletPath("/app");
        assertThat(RequestShape.of(app))
                .isNotEqualTo(RequestShape.of(servlet))
                .isNotEqualTo(RequestShape.of(request("GET", "/app/api/x", lines())));
        assertThat(get()).isNotEqualTo(RequestShape.of(request("GET", "/api/y", lines())));
    }

    @Test
    void noShapeForWhatMustNotBeRemembered() {
        assertThat(RequestShape.of(request("OPTIONS", "/api/x", lines())))
                .as("CORS preflights depend on Origin")
                .isNull();
        assertThat(RequestShape.of(request("GET", "/" + "a".repeat(RequestShape.MAX_LENGTH), lines())))
                .as("a long URI")
                .isNull();
        assertThat(get("a".repeat(RequestShape.MAX_LENGTH)))
                .as("a long Accept line")
                .isNull();
        String half = "b".repeat(RequestShape.MAX_LENGTH / 2);
        assertThat(get(half, half)).as("long Accept lines together").isNull();
        assertThat(RequestShape.of(request("POST", "/api/x", lines(), half, half)))
                .as("long Content-Type lines together")
                .isNull();

        String[] most = new String[RequestShape.MAX_LINES];
        String[] more = new String[RequestShape.MAX_LINES + 1];
        Arrays.fill(most, "text/plain");
        Arrays.fill(more, "text/plain");
        assertThat(get(most)).as("%d Accept lines", most.length).isNotNull();
        assertThat(get(more)).as("%d Accept lines", more.length).isNull();
        assertThat(RequestShape.of(request("POST", "/api/x", lines(), most))).isNotNull();
        assertThat(RequestShape.of(request("POST", "/api/x", lines(), more)))
                .as("%d Content-Type lines", more.length)
                .isNull();
    }
}
