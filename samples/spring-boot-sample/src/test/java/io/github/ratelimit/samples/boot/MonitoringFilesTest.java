package io.github.ratelimit.samples.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.yaml.snakeyaml.Yaml;

/**
 * The Grafana dashboard and the Prometheus alert rules in docs/monitoring/ query only what the application really
 * exports: every metric name and every label their queries use is in the sample's {@code /actuator/prometheus}
 * (on Redis, after traffic), which only admins may read.
 */
class MonitoringFilesTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final Path DASHBOARD = Path.of("../../docs/monitoring/ratelimit-dashboard.json");
    private static final Path ALERTS = Path.of("../../docs/monitoring/ratelimit-alerts.yml");
    /** Labels Prometheus adds when it scrapes ({@code job}, {@code instance}) or a histogram carries ({@code le}). */
    private static final Set<String> SCRAPE_LABELS = Set.of("job", "instance", "le");

    private static final Pattern METRIC = Pattern.compile("\\bratelimit_[a-z0-9_]+");
    private static final Pattern BY = Pattern.compile("\\bby\\s*\\(([^)]*)\\)");
    private static final Pattern MATCHER = Pattern.compile("[{,]\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!=|!~|=)");

    private static ConfigurableApplicationContext app;
    private static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        app = SpringApplication.run(SampleApplication.class, "--server.port=0", "--ratelimit.redis.url=" + redis.uri());
    }

    @AfterAll
    static void stop() {
        app.close();
    }

    private static HttpResponse<String> get(String path, String credentials) throws Exception {
        int port = ((WebServerApplicationContext) app).getWebServer().getPort();
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path));
        if (credentials != null) {
            request.header(
                    "Authorization",
                    "Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Each metric the scrape has, with the labels its series carry. */
    private static Map<String, Set<String>> exported() throws Exception {
        HttpResponse<String> scrape = get("/actuator/prometheus", "admin:admin");
        assertThat(scrape.statusCode()).isEqualTo(200);
        Map<String, Set<String>> metrics = new HashMap<>();
        Pattern label = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"");
        for (String line : scrape.body().split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int end = line.indexOf('{') >= 0 ? line.indexOf('{') : line.indexOf(' ');
            Set<String> labels = metrics.computeIfAbsent(line.substring(0, end), k -> new HashSet<>());
            if (line.indexOf('{') >= 0) {
                Matcher m = label.matcher(line.substring(line.indexOf('{'), line.lastIndexOf('}')));
                while (m.find()) {
                    labels.add(m.group(1));
                }
            }
        }
        return metrics;
    }

    /** Every PromQL expression of the dashboard's panels, by panel title. */
    @SuppressWarnings("unchecked")
    private static Map<String, String> dashboardQueries() throws Exception {
        Map<String, Object> dashboard = JsonParserFactory.getJsonParser().parseMap(Files.readString(DASHBOARD));
        Map<String, String> queries = new HashMap<>();
        for (Object p : (List<Object>) dashboard.get("panels")) {
            Map<String, Object> panel = (Map<String, Object>) p;
            List<Object> targets = (List<Object>) panel.get("targets");
            for (int i = 0; i < targets.size(); i++) {
                queries.put(panel.get("title") + " #" + i, (String) ((Map<String, Object>) targets.get(i)).get("expr"));
            }
        }
        return queries;
    }

    /** Every alert's expression, by alert name; each rule complete as Prometheus and Alertmanager need it. */
    @SuppressWarnings("unchecked")
    private static Map<String, String> alertQueries() throws Exception {
        Map<String, Object> file = new Yaml().load(Files.readString(ALERTS));
        Map<String, String> queries = new HashMap<>();
        for (Object g : (List<Object>) file.get("groups")) {
            for (Object r : (List<Object>) ((Map<String, Object>) g).get("rules")) {
                Map<String, Object> rule = (Map<String, Object>) r;
                assertThat(rule).containsKeys("alert", "expr", "for", "labels", "annotations");
                assertThat((Map<String, Object>) rule.get("labels")).containsKey("severity");
                assertThat((Map<String, Object>) rule.get("annotations")).containsKeys("summary", "description");
                queries.put((String) rule.get("alert"), (String) rule.get("expr"));
            }
        }
        return queries;
    }

    @Test
    void everyMetricAndLabelTheDashboardAndAlertsQueryIsExported() throws Exception {
        // Allowed calls, calls near the limit and rejected ones (hello: 5 a second), a 404, a SOFT delay.
        for (int i = 0; i < 8; i++) {
            get("/api/hello", null);
        }
        get("/api/nothing-here", null);
        Map<String, Set<String>> exported = exported();

        Map<String, String> queries = new HashMap<>(dashboardQueries());
        queries.putAll(alertQueries());
        assertThat(dashboardQueries()).as("the dashboard's panels").hasSizeGreaterThanOrEqualTo(10);
        assertThat(alertQueries())
                .as("the alert rules")
                .containsOnlyKeys(
                        "RateLimitFailOpenDecisions",
                        "RateLimitStoreBreakerOpen",
                        "RateLimitRejectionRatioRising",
                        "RateLimitStoreSlow",
                        "RateLimitRefundsLost");

        List<String> missing = new ArrayList<>();
        queries.forEach((where, expr) -> {
            Matcher metric = METRIC.matcher(expr);
            Set<String> labels = new HashSet<>(SCRAPE_LABELS);
            int metrics = 0;
            while (metric.find()) {
                metrics++;
                Set<String> carried = exported.get(metric.group());
                if (carried == null) {
                    missing.add(where + ": metric " + metric.group());
                } else {
                    labels.addAll(carried);
                }
            }
            if (metrics == 0) {
                missing.add(where + ": queries no ratelimit metric");
            }
            for (String used : labelsUsed(expr)) {
                if (!labels.contains(used)) {
                    missing.add(where + ": label " + used);
                }
            }
        });
        assertThat(missing).as("metrics and labels queried but not exported").isEmpty();
    }

    private static Set<String> labelsUsed(String expr) {
        Set<String> used = new HashSet<>();
        Matcher by = BY.matcher(expr);
        while (by.find()) {
            for (String label : by.group(1).split(",")) {
                used.add(label.trim());
            }
        }
        Matcher matcher = MATCHER.matcher(expr);
        while (matcher.find()) {
            used.add(matcher.group(1));
        }
        return used;
    }

    @Test
    void onlyAdminsReadTheScrapeEndpoint() throws Exception {
        assertThat(get("/actuator/prometheus", null).statusCode()).isEqualTo(401);
        assertThat(get("/actuator/prometheus", "alice:alice").statusCode()).isEqualTo(403);
        assertThat(get("/actuator/prometheus", "admin:admin").body()).contains("ratelimit_requests_total");
    }
}
