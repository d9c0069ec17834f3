package io.github.ratelimit.benchmarks.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;

/** The parts of the HTTP benchmark that turn measurements into figures: wrk's output, medians, the chart. */
class ReportPartsTest {

    /** wrk 4.1.0's output for one phase, as the benchmark runs it. */
    private static final String WRK = """
            Running 5s test @ http://127.0.0.1:36997/annotated
              2 threads and 16 connections
              Thread Stats   Avg      Stdev     Max   +/- Stdev
                Latency   718.43us    1.02ms  17.30ms   91.52%
                Req/Sec    11.68k     1.13k   14.02k    71.00%
              Latency Distribution
                 50%  613.00us
                 75%  801.00us
                 90%    1.20ms
                 99%    5.80ms
              116185 requests in 5.01s, 31.23MB read
              Non-2xx or 3xx responses: 3
              Socket errors: connect 0, read 1, write 0, timeout 2
            Requests/sec:  23190.62
            Transfer/sec:      6.23MB
            """;

    @Test
    void readsThroughputPercentilesTheSlowestRequestAndFailuresFromWrk() throws Exception {
        Load load = WrkGenerator.parse(WRK);
        assertThat(load.requestsPerSecond()).isEqualTo(23190.62);
        assertThat(load.p50Micros()).isEqualTo(613.0);
        assertThat(load.p99Micros()).isEqualTo(5800.0);
        assertThat(load.maxMicros()).isEqualTo(17300.0);
        assertThat(load.failed()).isEqualTo(6);
    }

    @Test
    void readsWrksUnitsAndRefusesOutputItCannotRead() {
        assertThat(WrkGenerator.micros("621.43us")).isEqualTo(621.43);
        assertThat(WrkGenerator.micros("1.5ms")).isEqualTo(1500.0);
        assertThat(WrkGenerator.micros("2.00s")).isEqualTo(2_000_000.0);
        assertThat(WrkGenerator.micros("1.00m")).isEqualTo(60_000_000.0);
        assertThatThrownBy(() -> WrkGenerator.parse("unable to connect to 127.0.0.1:1 Connection refused"))
                .hasMessageContaining("cannot read wrk's output");
    }

    @Test
    void takesTheMedianOfOddAndEvenRounds() {
        List<Load> three = List.of(load(3), load(1), load(2));
        assertThat(HttpBenchmark.median(three, Load::requestsPerSecond)).isEqualTo(2.0);
        assertThat(HttpBenchmark.median(List.of(load(1), load(4)), Load::requestsPerSecond))
                .isEqualTo(2.5);
    }

    @Test
    void drawsOneLinePerStoreAndEndpointInAWellFormedSvg() throws Exception {
        String svg = Chart.svg(
                List.of("local", "redis"),
                List.of("local store", "Redis & co"),
                List.of("bare", "url"),
                new int[] {1, 4, 16},
                (app, endpoint, c) -> c * (app.equals("local") ? 1000.0 : 500.0));
        var document = DocumentBuilderFactory.newInstance()
                .newDocumentBuilder()
                .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
        assertThat(document.getElementsByTagName("polyline").getLength()).isEqualTo(4);
        assertThat(svg).contains("Redis &amp; co, /url").contains(">16<");
    }

    private static Load load(double rps) {
        return new Load(rps, 0, 0, 0, 0);
    }
}
