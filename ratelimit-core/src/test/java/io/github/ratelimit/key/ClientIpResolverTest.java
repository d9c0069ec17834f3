package io.github.ratelimit.key;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.key.ClientIpResolver.ForwardedHeader;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ClientIpResolverTest {

    /** Trusts the usual private ranges; the socket peer in most tests is proxy 10.0.0.1. */
    private static final ClientIpResolver XFF = ClientIpResolver.builder()
            .trustedProxies("10.0.0.0/8", "192.168.0.0/16", "fd00::/8", "::1")
            .build();

    private static final ClientIpResolver FORWARDED = ClientIpResolver.builder()
            .trustedProxies("10.0.0.0/8", "fd00::/8")
            .forwardedHeader(ForwardedHeader.FORWARDED)
            .build();

    private static String resolve(ClientIpResolver resolver, String remote, String... values) {
        return resolver.resolve(remote, Arrays.asList(values));
    }

    /** Whether the socket peer is a trusted proxy: whose headers (a plan header) may be believed. */
    @Test
    void onlyATrustedProxyIsATrustedPeer() {
        assertThat(XFF.isTrustedProxy("10.0.0.1")).isTrue();
        assertThat(XFF.isTrustedProxy(" [::1] "))
                .as("brackets and spaces, as a container may report")
                .isTrue();
        assertThat(XFF.isTrustedProxy("::ffff:192.168.3.4")).as("IPv4-mapped").isTrue();
        assertThat(XFF.isTrustedProxy("203.0.113.7")).isFalse();
        assertThat(XFF.isTrustedProxy("proxy.internal")).as("no host names").isFalse();
        assertThat(XFF.isTrustedProxy(null)).isFalse();
        assertThat(ClientIpResolver.direct().isTrustedProxy("127.0.0.1"))
                .as("no proxy trusted")
                .isFalse();
    }

    @Nested
    class DirectConnections {

        @Test
        void directResolverUsesTheSocketPeerAndIgnoresTheHeader() {
            ClientIpResolver direct = ClientIpResolver.direct();

            assertThat(resolve(direct, "203.0.113.7", "198.51.100.1")).isEqualTo("203.0.113.7");
            assertThat(resolve(direct, "127.0.0.1", "198.51.100.1")).isEqualTo("127.0.0.1");
        }

        @Test
        void directResolverReadsXForwardedForByDefaultNameOnly() {
            assertThat(ClientIpResolver.direct().headerName()).isEqualTo("X-Forwarded-For");
        }

        @Test
        void directResolverStillGroupsIpv6ByDefaultPrefix() {
            assertThat(ClientIpResolver.direct().resolve("2001:db8:1:2::99", null))
                    .isEqualTo("2001:db8:1:2::/64");
        }

        @Test
        void returnsTheSocketPeerWhenItIsTrustedButTheHeaderIsAbsent() {
            assertThat(XFF.resolve("10.0.0.1", null)).isEqualTo("10.0.0.1");
            assertThat(XFF.resolve("10.0.0.1", List.of())).isEqualTo("10.0.0.1");
        }
    }

    @Nested
    class Spoofing {

        @Test
        void ignoresHeaderSentByAnUntrustedPeer() {
            assertThat(resolve(XFF, "203.0.113.7", "198.51.100.1")).isEqualTo("203.0.113.7");
        }

        @Test
        void ignoresHeaderNamingATrustedProxyWhenSentByAnUntrustedPeer() {
            assertThat(resolve(XFF, "203.0.113.7", "10.0.0.2")).isEqualTo("203.0.113.7");
        }

        @Test
        void ignoresAddressesPrependedByTheClientBeforeTheTrustedProxyAppend() {
            assertThat(resolve(XFF, "10.0.0.1", "198.51.100.1, 198.51.100.2, 203.0.113.7"))
                    .isEqualTo("203.0.113.7");
        }

        @Test
        void ignoresTrustedLookingAddressesPrependedByTheClient() {
            assertThat(resolve(XFF, "10.0.0.1", "10.0.0.99, 192.168.0.1, 203.0.113.7"))
                    .isEqualTo("203.0.113.7");
        }

        @Test
        void ignoresAClientSuppliedHeaderLineBeforeTheProxyLine() {
            assertThat(resolve(XFF, "10.0.0.1", "198.51.100.1", "203.0.113.7")).isEqualTo("203.0.113.7");
        }

        @Test
        void doesNotResolveHostNamesThatWouldNameATrustedProxy() {
            // Were "localhost" resolved to the trusted 127.0.0.1, the walk would continue to the
            // attacker's 198.51.100.1. As a malformed hop it stops at the trusted peer instead.
            ClientIpResolver resolver = ClientIpResolver.builder()
                    .trustedProxies("10.0.0.0/8", "127.0.0.0/8")
                    .build();

            assertThat(resolve(resolver, "10.0.0.1", "198.51.100.1, localhost")).isEqualTo("10.0.0.1");
        }

        @Test
        void forwardedResolverDoesNotAcceptXForwardedForSyntax() {
            assertThat(FORWARDED.headerName()).isEqualTo("Forwarded");
            assertThat(resolve(FORWARDED, "10.0.0.1", "198.51.100.1")).isEqualTo("10.0.0.1");
        }
    }

    @Nested
    class TrustedChains {

        @Test
        void skipsEveryTrustedProxyFromTheRight() {
            assertThat(resolve(XFF, "10.0.0.1", "203.0.113.7, 192.168.1.1, 10.0.0.3, 10.0.0.2"))
                    .isEqualTo("203.0.113.7");
        }

        @Test
        void walksAcrossSeveralHeaderLinesInArrivalOrder() {
            assertThat(resolve(XFF, "10.0.0.1", "198.51.100.1, 203.0.113.7", "192.168.1.1", "10.0.0.3, 10.0.0.2"))
                    .isEqualTo("203.0.113.7");
        }

        @Test
        void usesTheLeftmostHopWhenEveryHopIsTrusted() {
            assertThat(resolve(XFF, "10.0.0.1", "192.168.1.1, 10.0.0.3, 10.0.0.2"))
                    .isEqualTo("192.168.1.1");
        }

        @Test
        void usesTheLeftmostValidHopWhenEveryValidHopIsTrusted() {
            assertThat(resolve(XFF, "10.0.0.1", "unknown, 10.0.0.3, 10.0.0.2")).isEqualTo("10.0.0.3");
        }

        @Test
        void trustsIpv6Proxies() {
            assertThat(resolve(XFF, "::1", "2001:db8:1:2::7, fd00::2")).isEqualTo("2001:db8:1:2::/64");
        }

        @Test
        void trustsAnIpv4MappedSocketPeerListedAsIpv4() {
            assertThat(resolve(XFF, "::ffff:10.0.0.1", "203.0.113.7")).isEqualTo("203.0.113.7");
        }

        @Test
        void trustsIpv4MappedHopsListedAsIpv4() {
            assertThat(resolve(XFF, "10.0.0.1", "203.0.113.7, ::ffff:10.0.0.2")).isEqualTo("203.0.113.7");
        }

        @Test
        void acceptsALinkedListOfHeaderValues() {
            List<String> values = new LinkedList<>(List.of("198.51.100.1", "203.0.113.7"));

            assertThat(XFF.resolve("10.0.0.1", values)).isEqualTo("203.0.113.7");
        }
    }

    @Nested
    class MalformedHops {

        @ParameterizedTest
        @ValueSource(
                strings = {
                    "unknown",
                    "UNKNOWN",
                    "_hidden",
                    "_10.0.0.7",
                    "",
                    "   ",
                    "garbage",
                    "example.com",
                    "localhost",
                    "203.0.113",
                    "203.0.113.7.1",
                    "256.1.1.1",
                    "127.1",
                    "0x7f.0.0.1",
                    "2130706433",
                    "010.0.0.1",
                    "203.0.113.7:",
                    "203.0.113.7:99999",
                    "203.0.113.7:80:80",
                    "203.0.113.7:_",
                    "203.0.113.7:_a b",
                    "[203.0.113.7]",
                    "[2001:db8::1",
                    "[2001:db8::1]x",
                    "[2001:db8::1]:",
                    "2001:db8::1]",
                    "[]",
                    "[%eth0]",
                    "fe80::1%",
                    "203.0.113.7%eth0",
                    "203.0.113.7 198.51.100.1",
                    "\"203.0.113.7\"",
                    "for=203.0.113.7",
                    "2001:db8:::1",
                    "\u0000",
                    "203.0.113.7\u0000"
                })
        void stopsAtAMalformedHopAndUsesTheNearestTrustedProxy(String malformed) {
            assertThat(resolve(XFF, "10.0.0.1", "198.51.100.1, " + malformed + ", 10.0.0.2"))
                    .isEqualTo("10.0.0.2");
        }

        @Test
        void usesTheSocketPeerWhenTheRightmostHopIsMalformed() {
            assertThat(resolve(XFF, "10.0.0.1", "203.0.113.7, unknown")).isEqualTo("10.0.0.1");
        }

        @Test
        void usesTheSocketPeerWhenTheHeaderEndsWithAComma() {
            assertThat(resolve(XFF, "10.0.0.1", "203.0.113.7,")).isEqualTo("10.0.0.1");
        }

        @Test
        void ignoresMalformedHopsLeftOfTheClient() {
            assertThat(resolve(XFF, "10.0.0.1", "garbage, _x, , 203.0.113.7, 10.0.0.2"))
                    .isEqualTo("203.0.113.7");
        }

        @Test
        void treatsAnEmptyHeaderLineAsMalformed() {
            assertThat(resolve(XFF, "10.0.0.1", "203.0.113.7", "")).isEqualTo("10.0.0.1");
            assertThat(resolve(XFF, "10.0.0.1", " ")).isEqualTo("10.0.0.1");
        }

        @Test
        void treatsANullHeaderLineAsMalformed() {
            List<String> values = new ArrayList<>();
            values.add("203.0.113.7");
            values.add(null);

            assertThat(XFF.resolve("10.0.0.1", values)).isEqualTo("10.0.0.1");
        }

        @Test
        void treatsAnOverlongEntryAsMalformed() {
            String padded = " ".repeat(300) + "203.0.113.7";

            assertThat(resolve(XFF, "10.0.0.1", padded + ", 10.0.0.2")).isEqualTo("10.0.0.2");
        }

        @Test
        void toleratesSpacesAndTabsAroundEntries() {
            assertThat(resolve(XFF, "10.0.0.1", " \t203.0.113.7\t ,10.0.0.2 ")).isEqualTo("203.0.113.7");
        }
    }

    @Nested
    class PortsBracketsAndZones {

        @ParameterizedTest
        @CsvSource(
                delimiter = '|',
                value = {
                    "203.0.113.7:8080          | 203.0.113.7",
                    "203.0.113.7:0             | 203.0.113.7",
                    "203.0.113.7:65535         | 203.0.113.7",
                    "203.0.113.7:_obf          | 203.0.113.7",
                    "[2001:db8:1:2::7]:443     | 2001:db8:1:2::/64",
                    "[2001:db8:1:2::7]         | 2001:db8:1:2::/64",
                    "2001:db8:1:2::7           | 2001:db8:1:2::/64",
                    "[::ffff:203.0.113.7]:80   | 203.0.113.7",
                    "fe80::1%eth0              | fe80::/64",
                    "[fe80::1%25eth0]:80       | fe80::/64",
                })
        void acceptsPortsBracketsAndZoneIdsInHops(String hop, String expected) {
            assertThat(resolve(XFF, "10.0.0.1", hop + ", 10.0.0.2")).isEqualTo(expected);
        }

        @ParameterizedTest
        @CsvSource(
                delimiter = '|',
                value = {
                    "[::1]                     | 2001:db8::/64",
                    "0:0:0:0:0:0:0:1           | 2001:db8::/64",
                    "' ::1 '                   | 2001:db8::/64",
                    "fd00::1%eth0              | 2001:db8::/64",
                    "fd00:0:0:0:0:0:0:1%2      | 2001:db8::/64",
                    "[fd00::1%eth0]            | 2001:db8::/64",
                    "::ffff:10.0.0.1           | 2001:db8::/64",
                    "fe80::1%eth0              | fe80::/64",
                    "::ffff:203.0.113.9        | 203.0.113.9",
                })
        void normalizesTheSocketPeerAddress(String remote, String expected) {
            assertThat(resolve(XFF, remote, "2001:db8::1")).isEqualTo(expected);
        }
    }

    @Nested
    class ForwardedSyntax {

        @ParameterizedTest
        @ValueSource(
                strings = {
                    "for=203.0.113.7",
                    "for=\"203.0.113.7\"",
                    "For=203.0.113.7",
                    "FOR=203.0.113.7",
                    "for=\"203.0.113.7:8080\"",
                    "for=\"203.0.113.7:_port\"",
                    "for=\"203.0.113.\\7\"",
                    "for=203.0.113.7;proto=https;by=10.0.0.2",
                    "proto=https;for=203.0.113.7",
                    "by=\"[fd00::1]\";for=203.0.113.7;host=example.com",
                    " for = 203.0.113.7 ; proto=http ",
                    "for=203.0.113.7;",
                    "for=203.0.113.7;;proto=http",
                    "for=203.0.113.7;flag",
                })
        void readsTheForParameterOfAnElement(String element) {
            assertThat(resolve(FORWARDED, "10.0.0.1", element)).isEqualTo("203.0.113.7");
        }

        @ParameterizedTest
        @ValueSource(
                strings = {
                    "for=\"[2001:db8:1:2::7]:4711\"",
                    "for=\"[2001:db8:1:2::7]\"",
                    "for=[2001:db8:1:2::7]",
                    "for=\"2001:db8:1:2::7\"",
                    "for=\"[2001:DB8:1:2:0:0:0:7]\";proto=https",
                })
        void readsIpv6ForParameters(String element) {
            assertThat(resolve(FORWARDED, "10.0.0.1", element)).isEqualTo("2001:db8:1:2::/64");
        }

        @Test
        void walksElementsFromTheRight() {
            assertThat(resolve(
                            FORWARDED,
                            "10.0.0.1",
                            "for=198.51.100.1, for=203.0.113.7;proto=https, for=10.0.0.3;by=10.0.0.2"))
                    .isEqualTo("203.0.113.7");
        }

        @Test
        void walksSeveralHeaderLines() {
            assertThat(resolve(
                            FORWARDED,
                            "10.0.0.1",
                            "for=198.51.100.1",
                            "for=\"[2001:db8::7]\";proto=https",
                            "for=\"[fd00::3]:8443\""))
                    .isEqualTo("2001:db8::/64");
        }

        @Test
        void usesTheLeftmostElementWhenAllAreTrusted() {
            assertThat(resolve(FORWARDED, "10.0.0.1", "for=10.0.0.3, for=10.0.0.2"))
                    .isEqualTo("10.0.0.3");
        }

        @ParameterizedTest
        @ValueSource(
                strings = {
                    "for=unknown",
                    "for=\"unknown\"",
                    "for=_hidden",
                    "for=\"_hidden:80\"",
                    "proto=https",
                    "by=203.0.113.7",
                    "garbage",
                    "",
                    "for=",
                    "for=\"\"",
                    "for=\"203.0.113.7",
                    "for=203.0.113.7\"",
                    "for=\"203.0.113.7\"x",
                    "for=\"203.0.113.7\\\"",
                    "for=\"[2001:db8::1]:4711",
                    "for=203.0.113.7;for=198.51.100.1",
                    "for=example.com",
                    "for=\"localhost:80\"",
                    "203.0.113.7",
                    "fore=203.0.113.7",
                    "xfor=203.0.113.7",
                })
        void stopsAtAMalformedElement(String element) {
            assertThat(resolve(FORWARDED, "10.0.0.1", "for=198.51.100.1, " + element + ", for=10.0.0.2"))
                    .isEqualTo("10.0.0.2");
        }

        @Test
        void acceptsLongElementsUpToTheLimit() {
            String host = "h".repeat(900);

            assertThat(resolve(FORWARDED, "10.0.0.1", "for=203.0.113.7;host=" + host))
                    .isEqualTo("203.0.113.7");
        }

        @Test
        void treatsAnOverlongElementAsMalformed() {
            String host = "h".repeat(2000);

            assertThat(resolve(FORWARDED, "10.0.0.1", "for=203.0.113.7;host=" + host))
                    .isEqualTo("10.0.0.1");
        }
    }

    @Nested
    class Ipv6Keys {

        @Test
        void groupsAddressesOfTheSame64IntoOneKey() {
            ClientIpResolver direct = ClientIpResolver.direct();

            assertThat(direct.resolve("2001:db8:1:2::1", null)).isEqualTo("2001:db8:1:2::/64");
            assertThat(direct.resolve("2001:db8:1:2:ffff:ffff:ffff:ffff", null)).isEqualTo("2001:db8:1:2::/64");
        }

        @Test
        void separatesDifferent64s() {
            ClientIpResolver direct = ClientIpResolver.direct();

            assertThat(direct.resolve("2001:db8:1:3::1", null))
                    .isNotEqualTo(direct.resolve("2001:db8:1:2::1", null))
                    .isEqualTo("2001:db8:1:3::/64");
        }

        @Test
        void givesTheSameKeyForDifferentSpellings() {
            ClientIpResolver direct = ClientIpResolver.direct();

            assertThat(direct.resolve("2001:0DB8:0001:0002:0000:0000:0000:0001", null))
                    .isEqualTo(direct.resolve("[2001:db8:1:2::1]", null))
                    .isEqualTo(direct.resolve("2001:db8:1:2:0:0:0:1%eth1", null))
                    .isEqualTo("2001:db8:1:2::/64");
        }

        @Test
        void keysOnTheWholeAddressWithPrefix128() {
            ClientIpResolver resolver =
                    ClientIpResolver.builder().ipv6PrefixLength(128).build();

            assertThat(resolver.resolve("2001:0db8:0:0:0:0:0:0001", null)).isEqualTo("2001:db8::1");
            assertThat(resolver.resolve("2001:db8::2", null)).isEqualTo("2001:db8::2");
        }

        @ParameterizedTest
        @CsvSource({
            "48, 2001:db8:1::/48",
            "56, 2001:db8:1:200::/56",
            "1, ::/1",
            "127, 2001:db8:1:2ab:3:4:5:6/127",
        })
        void masksToTheConfiguredPrefix(int bits, String expected) {
            ClientIpResolver resolver =
                    ClientIpResolver.builder().ipv6PrefixLength(bits).build();

            assertThat(resolver.resolve("2001:db8:1:2ab:3:4:5:7", null)).isEqualTo(expected);
        }

        @ParameterizedTest
        @ValueSource(strings = {"::ffff:203.0.113.7", "::FFFF:cb00:7107", "[::ffff:203.0.113.7]"})
        void returnsIpv4MappedAddressesAsIpv4(String remote) {
            assertThat(ClientIpResolver.direct().resolve(remote, null)).isEqualTo("203.0.113.7");
        }

        @Test
        void keepsIpv4AddressesWholeWhateverTheIpv6Prefix() {
            ClientIpResolver resolver =
                    ClientIpResolver.builder().ipv6PrefixLength(8).build();

            assertThat(resolver.resolve("203.0.113.7", null)).isEqualTo("203.0.113.7");
        }
    }

    @Nested
    class UnknownClients {

        @ParameterizedTest
        @ValueSource(
                strings = {
                    "",
                    "  ",
                    "unknown",
                    "localhost",
                    "example.com",
                    "1.2.3",
                    "[::1",
                    "203.0.113.7.",
                    "/var/run/app.sock"
                })
        void returnsNullWhenTheSocketPeerIsNotAnAddress(String remote) {
            assertThat(resolve(XFF, remote, "203.0.113.7")).isNull();
        }

        @Test
        void returnsNullWhenTheSocketPeerIsNull() {
            assertThat(XFF.resolve(null, List.of("203.0.113.7"))).isNull();
            assertThat(ClientIpResolver.direct().resolve(null, null)).isNull();
        }
    }

    @Nested
    class BoundedWork {

        @Test
        void handlesAMegabyteOfCommas() {
            assertThat(resolve(XFF, "10.0.0.1", ",".repeat(1 << 20))).isEqualTo("10.0.0.1");
        }

        @Test
        void handlesAMegabyteWithoutCommas() {
            assertThat(resolve(XFF, "10.0.0.1", "1".repeat(1 << 20))).isEqualTo("10.0.0.1");
        }

        @Test
        void examinesAtMost64Hops() {
            String trustedHops = "10.0.0.2, ".repeat(63);

            assertThat(resolve(XFF, "10.0.0.1", "203.0.113.7, " + trustedHops + "10.0.0.3"))
                    .as("the client is hop 65 from the right, beyond the limit")
                    .isEqualTo("10.0.0.2");
            assertThat(resolve(XFF, "10.0.0.1", "203.0.113.7, " + trustedHops))
                    .as("a trailing comma is a malformed rightmost hop")
                    .isEqualTo("10.0.0.1");
            assertThat(resolve(XFF, "10.0.0.1", "203.0.113.7, " + "10.0.0.2, ".repeat(62) + "10.0.0.3"))
                    .isEqualTo("203.0.113.7");
        }

        @Test
        void handlesAHundredThousandTrustedHops() {
            String header = "203.0.113.7" + ", 10.0.0.2".repeat(100_000);

            assertThat(resolve(XFF, "10.0.0.1", header)).isEqualTo("10.0.0.2");
        }

        @ParameterizedTest
        @ValueSource(strings = {",", "1", " ", "10.0.0.2,", "for=10.0.0.2,", "for=10.0.0.2;"})
        void readsABoundedNumberOfCharactersOfAGigantic2GigabyteHeader(String pattern) {
            AtomicLong reads = new AtomicLong();
            CharSequence huge = new RepeatingSequence(pattern, Integer.MAX_VALUE, reads);

            for (ClientIpResolver resolver : List.of(XFF, FORWARDED)) {
                resolver.resolveHops("10.0.0.1", List.of(huge));
            }

            assertThat(reads.get()).isLessThan(2 * 64 * (1024 + 2) * 2);
        }

        @Test
        void readsABoundedNumberOfHeaderLines() {
            AtomicLong reads = new AtomicLong();
            List<String> lines = countingList(Integer.MAX_VALUE, index -> "10.0.0.2", reads);

            assertThat(XFF.resolve("10.0.0.1", lines)).isEqualTo("10.0.0.2");
            assertThat(reads.get()).isEqualTo(64);
        }
    }

    @Nested
    class Configuration {

        @Test
        void acceptsACollectionOfTrustedProxies() {
            ClientIpResolver resolver = ClientIpResolver.builder()
                    .trustedProxies(List.of("127.0.0.1", "::1", " 10.0.0.0/8 "))
                    .build();

            assertThat(resolve(resolver, "10.9.9.9", "203.0.113.7")).isEqualTo("203.0.113.7");
            assertThat(resolve(resolver, "127.0.0.1", "203.0.113.8")).isEqualTo("203.0.113.8");
            assertThat(resolve(resolver, "127.0.0.2", "203.0.113.8")).isEqualTo("127.0.0.2");
        }

        @Test
        void replacesPreviouslySetTrustedProxies() {
            ClientIpResolver resolver = ClientIpResolver.builder()
                    .trustedProxies("10.0.0.0/8")
                    .trustedProxies(Collections.emptyList())
                    .build();

            assertThat(resolve(resolver, "10.0.0.1", "203.0.113.7")).isEqualTo("10.0.0.1");
        }

        @Test
        void describesItselfForLogs() {
            assertThat(FORWARDED)
                    .hasToString("ClientIpResolver[header=Forwarded,"
                            + " trustedProxies=[10.0.0.0/8, fd00::/8], ipv6PrefixLength=64]");
        }

        @Test
        void namesHeadersExactly() {
            assertThat(ForwardedHeader.X_FORWARDED_FOR.headerName()).isEqualTo("X-Forwarded-For");
            assertThat(ForwardedHeader.FORWARDED.headerName()).isEqualTo("Forwarded");
            assertThat(XFF.headerName()).isEqualTo("X-Forwarded-For");
        }

        @Test
        void rejectsAnInvalidTrustedProxyWithExactMessage() {
            assertThatThrownBy(() -> ClientIpResolver.builder().trustedProxies("10.0.0.0/33"))
                    .isExactlyInstanceOf(InvalidRateLimitConfigurationException.class)
                    .hasMessage("trusted proxy '10.0.0.0/33': prefix length 33 is out of range"
                            + " for IPv4 (0..32). Use a CIDR such as '10.0.0.0/8'.");
        }

        @Test
        void rejectsANullTrustedProxyEntryWithExactMessage() {
            assertThatThrownBy(() -> ClientIpResolver.builder().trustedProxies("10.0.0.0/8", null))
                    .isExactlyInstanceOf(InvalidRateLimitConfigurationException.class)
                    .hasMessage("trusted proxy must not be null. Use a CIDR such as '10.0.0.0/8'"
                            + " or a single address such as '127.0.0.1'.");
        }

        @ParameterizedTest
        @ValueSource(ints = {0, -1, 129, Integer.MIN_VALUE})
        void rejectsIpv6PrefixLengthOutOfRangeWithExactMessage(int bits) {
            assertThatThrownBy(() -> ClientIpResolver.builder().ipv6PrefixLength(bits))
                    .isExactlyInstanceOf(InvalidRateLimitConfigurationException.class)
                    .hasMessage("ipv6PrefixLength " + bits + " is out of range (1..128). Use 64 to"
                            + " group IPv6 clients by /64 network (the default) or 128 to key on"
                            + " the whole address.");
        }

        @Test
        void rejectsNullArguments() {
            ClientIpResolver.Builder builder = ClientIpResolver.builder();

            assertThatThrownBy(() -> builder.trustedProxies((String[]) null))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessage("cidrs");
            assertThatThrownBy(() -> builder.trustedProxies((List<String>) null))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessage("cidrs");
            assertThatThrownBy(() -> builder.forwardedHeader(null))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessage("header");
        }
    }

    /** A read-only list of the given size that counts element reads. */
    private static List<String> countingList(int size, IntFunction<String> elements, AtomicLong reads) {
        return new AbstractList<>() {
            @Override
            public String get(int index) {
                reads.incrementAndGet();
                return elements.apply(index);
            }

            @Override
            public int size() {
                return size;
            }
        };
    }

    /** A virtual character sequence repeating a pattern, counting character reads. */
    private static final class RepeatingSequence implements CharSequence {
        private final String pattern;
        private final int length;
        private final AtomicLong reads;

        RepeatingSequence(String pattern, int length, AtomicLong reads) {
            this.pattern = pattern;
            this.length = length;
            this.reads = reads;
        }

        @Override
        public int length() {
            return length;
        }

        @Override
        public char charAt(int index) {
            reads.incrementAndGet();
            return pattern.charAt(index % pattern.length());
        }

        @Override
        public CharSequence subSequence(int start, int end) {
            if (end - start > 4096) {
                throw new AssertionError("copied " + (end - start) + " characters of one hop");
            }
            StringBuilder text = new StringBuilder(end - start);
            for (int i = start; i < end; i++) {
                text.append(charAt(i));
            }
            return text.toString();
        }

        @Override
        public String toString() {
            throw new UnsupportedOperationException("a 2 GB header must not be copied");
        }
    }

    /** The resolver returns a canonical IPv4 peer as it stands: the same key the parse gives. */
    @Nested
    class CanonicalIpv4 {

        @Test
        void everyCanonicalAddressIsItsOwnKey() {
            java.util.Random random = new java.util.Random(42);
            ClientIpResolver resolver = ClientIpResolver.builder().build();
            for (int i = 0; i < 20_000; i++) {
                String address = random.nextInt(256) + "." + random.nextInt(256) + "." + random.nextInt(256) + "."
                        + (i < 256 ? i : random.nextInt(256));
                assertThat(ClientIpResolver.isCanonicalIpv4(address))
                        .as(address)
                        .isTrue();
                assertThat(HopParser.parseNode(address)).as(address).hasToString(address);
                assertThat(resolver.resolve(address, List.of())).isSameAs(address);
            }
        }

        @ParameterizedTest
        @ValueSource(
                strings = {
                    "01.2.3.4", "1.2.3.04", "1.2.3.256", "1.2.3", "1.2.3.4.5", " 1.2.3.4", "1.2.3.4 ", "1.2.3.4:80",
                    "1..2.3", "1.2.3.", ".1.2.3", "1.2.3.4444", "1.2.3.a", "0000.1.2.3", "255.255.255.2555", "1.2.3.-4",
                    "१.2.3.4"
                })
        void anythingElseIsParsedAsBefore(String address) {
            assertThat(ClientIpResolver.isCanonicalIpv4(address)).isFalse();
            IpAddress parsed = HopParser.parseNode(address.strip());
            String expected = parsed == null ? null : parsed.toString();
            assertThat(ClientIpResolver.builder().build().resolve(address, List.of()))
                    .isEqualTo(expected);
        }

        @Test
        void aPeerOfATrustedProxyIsStillWalked() {
            ClientIpResolver resolver = ClientIpResolver.builder()
                    .trustedProxies(List.of("10.0.0.0/8"))
                    .build();
            assertThat(resolver.resolve("10.1.2.3", List.of("203.0.113.9"))).isEqualTo("203.0.113.9");
        }
    }
}
