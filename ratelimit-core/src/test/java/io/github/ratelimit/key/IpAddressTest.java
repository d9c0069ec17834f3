package io.github.ratelimit.key;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class IpAddressTest {

    @ParameterizedTest
    @ValueSource(strings = {"0.0.0.0", "1.2.3.4", "10.0.0.1", "192.0.2.255", "255.255.255.255"})
    void parsesDottedQuadAndPrintsItUnchanged(String text) {
        IpAddress address = IpAddress.parseLiteral(text);

        assertThat(address).isNotNull();
        assertThat(address.isIpv4()).isTrue();
        assertThat(address).hasToString(text);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                ".",
                "1.2.3",
                "1.2.3.4.5",
                "1.2.3.4.",
                ".1.2.3.4",
                "1..2.3",
                "256.0.0.1",
                "1.2.3.256",
                "1.2.3.1000",
                "01.2.3.4",
                "1.2.3.04",
                "00.0.0.0",
                "0x7f.0.0.1",
                "2130706433",
                "127.1",
                "1.2.3.-4",
                "+1.2.3.4",
                " 1.2.3.4",
                "1.2.3.4 ",
                "1.2.3.4%eth0",
                "\uFF11.2.3.4",
                "localhost",
                "example.com",
                "a.b.c.d",
                "1.2.3.4/32"
            })
    void rejectsAnythingButAStrictDottedQuad(String text) {
        assertThat(IpAddress.parseLiteral(text)).isNull();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "::                                        | ::",
                "::1                                       | ::1",
                "1::                                       | 1::",
                "2001:DB8:0:0:0:0:0:1                      | 2001:db8::1",
                "2001:0db8:0000:0000:0000:0000:0000:0001   | 2001:db8::1",
                "1:2:3:4:5:6:7::                           | 1:2:3:4:5:6:7:0",
                "::2:3:4:5:6:7:8                           | 0:2:3:4:5:6:7:8",
                "2001:db8:0:1:1:1:1:1                      | 2001:db8:0:1:1:1:1:1",
                "2001:0:0:1:0:0:0:1                        | 2001:0:0:1::1",
                "2001:db8:0:0:1:0:0:1                      | 2001:db8::1:0:0:1",
                "fe80::ABCD:ef01                           | fe80::abcd:ef01",
                "64:ff9b::192.0.2.33                       | 64:ff9b::c000:221",
                "::192.0.2.1                               | ::c000:201",
                "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff   | ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            })
    void parsesIpv6AndPrintsRfc5952CanonicalForm(String text, String canonical) {
        IpAddress address = IpAddress.parseLiteral(text);

        assertThat(address).isNotNull();
        assertThat(address.isIpv4()).isFalse();
        assertThat(address).hasToString(canonical);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "::ffff:192.0.2.1",
                "::FFFF:192.0.2.1",
                "0:0:0:0:0:ffff:c000:201",
                "::ffff:c000:0201",
                "0000:0000:0000:0000:0000:ffff:192.0.2.1"
            })
    void treatsIpv4MappedIpv6AsTheIpv4Address(String text) {
        IpAddress address = IpAddress.parseLiteral(text);

        assertThat(address).isEqualTo(IpAddress.parseLiteral("192.0.2.1"));
        assertThat(address.isIpv4()).isTrue();
        assertThat(address).hasToString("192.0.2.1");
        assertThat(address.toIpv6String()).isEqualTo("::ffff:192.0.2.1");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                ":",
                ":::",
                "1:::2",
                "1::2::3",
                ":1::",
                "1::2:",
                ":1:2:3:4:5:6:7",
                "1:2:3:4:5:6:7:",
                "1:2:3:4:5:6:7",
                "1:2:3:4:5:6:7:8:9",
                "1:2:3:4:5:6:7:8::",
                "::1:2:3:4:5:6:7:8",
                "12345::",
                "g::1",
                "::-1",
                "::1.2.3",
                "::1.2.3.4.5",
                "::256.0.0.1",
                "1.2.3.4::",
                "::1.2.3.4:5",
                "1:2:3:4:5:6:7:1.2.3.4",
                "1:2:3:4:5:6:1.2.3.4:7",
                "fe80::1%eth0",
                "[::1]",
                "::1/128",
                " ::1",
                "::\uFF11",
                "1:2:3:4:5:6:7:8:",
                "0:0:0:0:0:0:0:0:0:0:0:0:0:0:0"
            })
    void rejectsMalformedIpv6(String text) {
        assertThat(IpAddress.parseLiteral(text)).isNull();
    }

    @Test
    void rejectsOverlongIpv6WithoutParsingIt() {
        assertThat(IpAddress.parseLiteral("0000:".repeat(100) + ":1")).isNull();
    }

    @Test
    void equalsAndHashCodeIgnoreSpelling() {
        IpAddress compressed = IpAddress.parseLiteral("2001:db8::1");
        IpAddress expanded = IpAddress.parseLiteral("2001:0DB8:0:0:0:0:0:0001");

        assertThat(compressed).isEqualTo(expanded).hasSameHashCodeAs(expanded);
        assertThat(compressed).isNotEqualTo(IpAddress.parseLiteral("2001:db8::2"));
    }

    @ParameterizedTest
    @CsvSource({
        "2001:db8:1:2:3:4:5:6, 64, 2001:db8:1:2::",
        "2001:db8:1:2:3:4:5:6, 48, 2001:db8:1::",
        "2001:db8:1:2:3:4:5:6, 127, 2001:db8:1:2:3:4:5:6",
        "2001:db8:1:2:3:4:5:7, 127, 2001:db8:1:2:3:4:5:6",
        "2001:db8:1:2:3:4:5:6, 128, 2001:db8:1:2:3:4:5:6",
        "2001:db8:1:2:3:4:5:6, 1, ::",
        "ffff::, 1, 8000::",
        "2001:db8:1:2:3:4:5:6, 0, ::",
    })
    void masksToPrefix(String text, int prefixLength, String expected) {
        assertThat(IpAddress.parseLiteral(text).masked(prefixLength)).hasToString(expected);
    }
}
