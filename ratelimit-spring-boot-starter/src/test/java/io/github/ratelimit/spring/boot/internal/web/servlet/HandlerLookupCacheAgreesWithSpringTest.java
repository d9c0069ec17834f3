package io.github.ratelimit.spring.boot.internal.web.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.Rule;
import io.github.ratelimit.servlet.HandlerRules;
import io.github.ratelimit.spring.boot.internal.method.HandlerId;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockServletConfig;
import org.springframework.test.context.TestPropertySource;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.WebApplicationContext;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.HandlerExecutionChain;

/**
 * What the filter's remembered handler lookup answers is what Spring MVC's own {@code DispatcherServlet} finds, for
 * any request, whatever requests came before: thousands of random requests (a seeded {@link Random}) to paths mapped
 * several times by {@code produces} and {@code consumes}, with {@code Accept} and {@code Content-Type} headers
 * repeated, reordered, weighted, wildcarded, invalid or absent, and with and without a body, are each looked up by
 * one {@link MvcHandlerRules} whose cache they share, and by a real dispatcher servlet of the same real application
 * context. Where a query parameter negotiates content too, the requests carry one, and the lookups still agree.
 */
@SpringBootTest(
        classes = HandlerLookupCacheAgreesWithSpringTest.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.MOCK)
class HandlerLookupCacheAgreesWithSpringTest {

    private static final long SEED = 0x33_02L;
    private static final int CASES = 6000;

    @SpringBootApplication
    static class App {

        @RestController
        static class Report {
            @GetMapping(path = "/report", produces = "application/json")
            @RateLimit(name = "report-json", perMinute = 1_000_000)
            String json() {
                return "{}";
            }

            @GetMapping(path = "/report", produces = "text/plain")
            String text() {
                return "text";
            }

            @GetMapping(path = "/report", produces = "text/csv")
            @RateLimit(name = "report-csv", perMinute = 1_000_000)
            String csv() {
                return "a,b";
            }

            @GetMapping(path = "/report", produces = "application/*")
            @RateLimit(name = "report-application", perMinute = 1_000_000)
            String application() {
                return "?";
            }

            @GetMapping(path = "/report")
            @RateLimit(name = "report-any", perMinute = 1_000_000)
            String any() {
                return "any";
            }
        }

        @RestController
        static class Upload {
            @PostMapping(path = "/upload", consumes = "application/json")
            @RateLimit(name = "upload-json", perMinute = 1_000_000)
            String json(@RequestBody String body) {
                return body;
            }

            @PostMapping(path = "/upload", consumes = "text/*")
            String text(@RequestBody String body) {
                return body;
            }

            @PostMapping(path = "/upload", consumes = "application/json", produces = "text/csv")
            @RateLimit(name = "upload-json-csv", perMinute = 1_000_000)
            String jsonToCsv(@RequestBody String body) {
                return body;
            }

            /** A body is optional: a request without one matches whatever its {@code Content-Type}. */
            @PostMapping(path = "/optional", consumes = "application/json")
            @RateLimit(name = "optional-json", perMinute = 1_000_000)
            String optional(@RequestBody(required = false) String body) {
                return "optional";
            }
        }
    }

    /** Spring MVC's own lookup: the dispatcher servlet's {@code getHandler}, over the handler mappings it detects. */
    static final class Dispatcher extends DispatcherServlet {
        Dispatcher(WebApplicationContext context) {
            super(context);
        }

        HandlerExecutionChain handlerFor(HttpServletRequest request) throws Exception {
            return getHandler(request);
        }
    }

    @Autowired
    WebApplicationContext context;

    private static final String[] PATHS = {
        "/report", "/report", "/report", "/upload", "/upload", "/optional", "/elsewhere"
    };
    /** The methods a path's handlers answer, tried most; any other, now and then. */
    private static final String[] READS = {"GET", "GET", "HEAD"};

    private static final String[] WRITES = {"POST"};
    private static final String[] ANY = {"GET", "POST", "PUT", "HEAD"};
    private static final String[] MEDIA = {
        "application/json", "text/plain", "text/csv", "text/*", "*/*", "application/*", "text/html", "application/xml"
    };
    private static final String[] QUALITIES = {"", "", ";q=0", ";q=0.1", ";q=0.35", ";q=0.5", ";q=0.9", ";q=1"};
    private static final String[] CONTENT_TYPES = {
        "application/json",
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/xml",
        "application/json;charset=ISO-8859-1",
        "",
        "not a type"
    };
    private static final String[][] BODIES = {
        {}, {"Content-Length", "0"}, {"Content-Length", "4"}, {"Transfer-Encoding", "chunked"}
    };
    /** The query parameter that negotiates content when {@code favor-parameter} is on; else nothing reads it. */
    private static final String[] FORMATS = {null, null, null, "json", "csv", "txt", "xml", "nope"};

    /** One random request, rebuilt identically for each lookup. */
    private record Case(
            String method, String path, String format, List<String> accept, List<String> contentType, String[] body) {

        MockHttpServletRequest request(WebApplicationContext context) {
            ContainerRequest request = new ContainerRequest(context.getServletContext(), method, path);
            if (format != null) {
                request.setQueryString("format=" + format);
                request.addParameter("format", format);
            }
            accept.forEach(value -> request.addHeader("Accept", value));
            contentType.forEach(request::addContentType);
            if (body.length > 0) {
                request.addHeader(body[0], body[1]);
            }
            return request;
        }

        @Override
        public String toString() {
            StringBuilder text = new StringBuilder(method)
                    .append(' ')
                    .append(path)
                    .append(format == null ? "" : "?format=" + format);
            accept.forEach(value -> text.append(" | Accept: ").append(value));
            contentType.forEach(value -> text.append(" | Content-Type: ").append(value));
            if (body.length > 0) {
                text.append(" | ").append(body[0]).append(": ").append(body[1]);
            }
            return text.toString();
        }
    }

    private static Case randomCase(Random random) {
        List<String> accept = new ArrayList<>();
        for (int lines = random.nextInt(4); lines > 0; lines--) {
            if (random.nextInt(20) == 0) {
                accept.add(random.nextBoolean() ? "" : "bogus");
                continue;
            }
            List<String> ranges = new ArrayList<>();
            for (int n = 1 + random.nextInt(2); n > 0; n--) {
                ranges.add(pick(random, MEDIA) + pick(random, QUALITIES));
            }
            accept.add(String.join(", ", ranges));
        }
        List<String> contentType = new ArrayList<>();
        for (int lines = random.nextInt(3) == 0 ? 0 : 1 + random.nextInt(2); lines > 0; lines--) {
            contentType.add(pick(random, CONTENT_TYPES));
        }
        String path = pick(random, PATHS);
        String[] methods = random.nextInt(10) == 0 ? ANY : path.equals("/report") ? READS : WRITES;
        return new Case(pick(random, methods), path, pick(random, FORMATS), accept, contentType, pick(random, BODIES));
    }

    private static <T> T pick(Random random, T[] values) {
        return values[random.nextInt(values.length)];
    }

    /** What a lookup found: the rule names of the handler method, and the handler when it has rules. */
    private record Found(List<String> rules, HandlerId handler) {
        static final Found NONE = new Found(List.of(), null);

        @Override
        public String toString() {
            return rules + (handler == null ? "" : " at " + handler.method().getName() + "()");
        }
    }

    /** What Spring MVC's own lookup finds; none when it chose no handler method with rules, or failed. */
    private static Found expected(Dispatcher dispatcher, MockHttpServletRequest request) {
        try {
            HandlerExecutionChain chain = dispatcher.handlerFor(request);
            if (chain != null && chain.getHandler() instanceof HandlerMethod method) {
                RateLimit rule = method.getMethod().getAnnotation(RateLimit.class);
                return rule == null
                        ? Found.NONE
                        : new Found(List.of(rule.name()), HandlerId.of(method.getBeanType(), method.getMethod()));
            }
        } catch (Exception e) {
            // Spring MVC answers this request itself (406, 415, 405, ambiguous): no handler method runs.
        }
        return Found.NONE;
    }

    /** What the filter's lookup finds, remembered or not. */
    private static Found actual(MvcHandlerRules rules, MockHttpServletRequest request) {
        HandlerRules.Match match = rules.rulesFor(request);
        List<String> names = match.rules().stream().map(Rule::name).toList();
        return new Found(names, (HandlerId) request.getAttribute(MvcHandlerRules.DECIDED_ATTRIBUTE));
    }

    /**
     * Looks {@link #CASES} random requests up with one {@link MvcHandlerRules} and with Spring MVC's dispatcher
     * servlet, and asserts that they always agree, and that every handler was chosen by some.
     *
     * @param remembered whether the context's lookups are remembered by shape
     */
    static void assertLookupsAgree(WebApplicationContext context, boolean remembered) throws ServletException {
        Dispatcher dispatcher = new Dispatcher(context);
        dispatcher.init(new MockServletConfig(context.getServletContext(), "lookup-oracle"));
        MvcHandlerRules rules = new MvcHandlerRules(context, rule -> false);

        Random random = new Random(SEED);
        Map<String, Integer> chosen = new TreeMap<>();
        List<String> disagreements = new ArrayList<>();
        for (int i = 0; i < CASES; i++) {
            Case c = randomCase(random);
            Found expected = expected(dispatcher, c.request(context));
            Found actual = actual(rules, c.request(context));
            chosen.merge(
                    expected.rules().isEmpty() ? "(no rules)" : expected.rules().get(0), 1, Integer::sum);
            if (!actual.equals(expected)) {
                disagreements.add("#" + i + " " + c + ": Spring MVC " + expected + ", cached lookup " + actual);
            }
        }
        assertThat(disagreements)
                .as("seed %d, %d cases; handlers chosen: %s", SEED, CASES, chosen)
                .isEmpty();
        assertThat(chosen)
                .as("every handler is chosen by some requests (seed %d)", SEED)
                .containsKeys(
                        "report-json",
                        "report-csv",
                        "report-application",
                        "report-any",
                        "upload-json",
                        "upload-json-csv",
                        "optional-json",
                        "(no rules)");
        assertThat(MvcHandlerRules.answersByShape(dispatcher.getHandlerMappings()))
                .as("this application's lookups are remembered")
                .isEqualTo(remembered);
    }

    @Test
    void theRememberedLookupAlwaysFindsTheHandlerSpringMvcFinds() throws ServletException {
        assertLookupsAgree(context, true);
    }

    /** Content negotiated by a query parameter too: what the request's shape does not hold decides a handler. */
    @Nested
    @TestPropertySource(properties = "spring.mvc.contentnegotiation.favor-parameter=true")
    class WhenAQueryParameterNegotiatesContent {

        @Autowired
        WebApplicationContext negotiatingContext;

        @Test
        void theLookupFindsTheHandlerSpringMvcFindsAndIsNotRemembered() throws ServletException {
            assertLookupsAgree(negotiatingContext, false);
        }
    }
}
