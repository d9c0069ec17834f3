package io.github.ratelimit.spring.boot.internal.web.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * The shortcuts that answer most requests before any parse or lookup. The first-segment check may only ever say "no
 * handler with rules here" when no pattern could match, so every doubt (a variable or wildcard first, a path Spring
 * would decode, a servlet mapped by prefix) turns it off. (What a lookup is remembered by: {@code RequestShapeTest}.)
 */
class MvcHandlerRulesShortcutsTest {

    private static List<PathPattern> patterns(String... texts) {
        return Arrays.stream(texts)
                .map(PathPatternParser.defaultInstance::parse)
                .toList();
    }

    @Test
    void patternsThatStartWithPlainTextGiveTheirFirstSegmentsInLowerCase() {
        assertThat(MvcHandlerRules.firstSegments(patterns("/api/hello", "/API/items/{id}", "/login")))
                .containsExactly("api", "login");
        assertThat(MvcHandlerRules.firstSegments(patterns("/reports"))).containsExactly("reports");
    }

    @Test
    void anyPatternThatDoesNotStartWithPlainTextTurnsTheCheckOff() {
        assertThat(MvcHandlerRules.firstSegments(patterns("/api/hello", "/{tenant}/items")))
                .isNull();
        assertThat(MvcHandlerRules.firstSegments(patterns("/**"))).isNull();
        assertThat(MvcHandlerRules.firstSegments(patterns("/api*/x"))).isNull();
        assertThat(MvcHandlerRules.firstSegments(patterns("/"))).isNull();
        assertThat(MvcHandlerRules.firstSegments(null))
                .as("patterns not all known")
                .isNull();
    }

    private static final String[] API = {"api", "login"};

    @Test
    void aRequestMayMatchOnlyWhenItsFirstSegmentAfterTheContextPathIsOneOfThem() {
        assertThat(MvcHandlerRules.mayMatch(request("/app", "/app/Api/hello", null), API))
                .as("any case")
                .isTrue();
        assertThat(MvcHandlerRules.mayMatch(request("", "/login", null), API)).isTrue();
        assertThat(MvcHandlerRules.mayMatch(request("", "/api/", null), API)).isTrue();
        assertThat(MvcHandlerRules.mayMatch(request("", "/bare", null), API)).isFalse();
        assertThat(MvcHandlerRules.mayMatch(request("", "/apis/hello", null), API))
                .isFalse();
        assertThat(MvcHandlerRules.mayMatch(request("", "/ap", null), API)).isFalse();
        assertThat(MvcHandlerRules.mayMatch(request("/api", "/api/static/x.css", null), API))
                .as("the context path is not a segment")
                .isFalse();
    }

    @Test
    void aPathSpringWouldReadDifferentlyIsCheckedInFull() {
        assertThat(MvcHandlerRules.mayMatch(request("", "/a%70i/hello", null), API))
                .as("encoded")
                .isTrue();
        assertThat(MvcHandlerRules.mayMatch(request("", "/x;v=1/hello", null), API))
                .as("path parameter")
                .isTrue();
        assertThat(MvcHandlerRules.mayMatch(request("/spring", "/spring/mvc/x/hello", "/x/hello"), API))
                .as("a servlet mapped by prefix: Spring matches what follows it")
                .isTrue();
        assertThat(MvcHandlerRules.mayMatch(request("/app", "/app", null), API))
                .as("the context's root")
                .isTrue();
    }

    private static MockHttpServletRequest request(String context, String uri, String pathInfo) {
        MockHttpServletRequest request = new MockHttpServletRequest("GET", uri);
        request.setContextPath(context);
        request.setPathInfo(pathInfo);
        return request;
    }
}
