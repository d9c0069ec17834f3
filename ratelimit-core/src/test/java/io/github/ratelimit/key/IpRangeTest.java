package io.github.ratelimit.key;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class IpRangeTest {

    @ParameterizedTest
    @CsvSource({
        "10.0.0.0/8, 10.0.0.0, true",
        "10.0.0.0/8, 10.255.255.255, true",
        "10.0.0.0/8, 11.0.0.0, false",
        "10.0.0.0/8, 9.255.255.255, false",
        "192.168.4.0/22, 192.168.7.200, true",
        "192.168.4.0/22, 192.168.8.1, false",
        "127.0.0.1, 127.0.0.1, true",
        "127.0.0.1, 127.0.0.2, false",
        "127.0.0.1/32, 127.0.0.1, true",
        "0.0.0.0/0, 203.0.113.7, true",
        "0.0.0.0/0, 2001:db8::1, false",
        "10.0.0.0/8, ::ffff:10.1.2.3, true",
        "10.0.0.0/8, ::ffff:11.1.2.3, false",
        "10.0.0.0/8, ::a01:203, false",
        "fd00::/8, fd12:3456::1, true",
        "fd00::/8, fe00::1, false",
        "2001:db8::/32, 2001:db8:ffff::1, true",
        "2001:db8::/32, 2001:db9::1, false",
        "2001:db8:1:2::/64, 2001:db8:1:2:ffff:ffff:ffff:ffff, true",
        "2001:db8:1:2::/64, 2001:db8:1:3::, false",
        "2001:db8::1:0/112, 2001:db8::1:ffff, true",
        "2001:db8::1:0/112, 2001:db8::2:0, false",
        "::1, ::1, true",
        "::1, ::2, false",
        "::1/128, ::1, true",
        "::/0, 2001:db8::1, true",
        "::/0, 203.0.113.7, true",
        "::ffff:10.0.0.0/104, 10.9.8.7, true",
        "::ffff:10.0.0.0/104, 11.0.0.1, false",
        "::ffff:10.0.0.1, 10.0.0.1, true",
    })
    void testsMembership(String range, String address, boolean expected) {
        assertThat(IpRange.parse(range).contains(IpAddress.parseLiteral(address)))
                .isEqualTo(expected);
    }

    @Test
    void ignoresSurroundingWhitespaceAndKeepsTheEntryForDiagnostics() {
        IpRange range = IpRange.parse("  10.0.0.0/8\t");

        assertThat(range.contains(IpAddress.parseLiteral("10.1.1.1"))).isTrue();
        assertThat(range).hasToString("10.0.0.0/8");
    }

    @Test
    void acceptsPrefixLengthWithLeadingZero() {
        assertThat(IpRange.parse("10.0.0.0/08").contains(IpAddress.parseLiteral("10.9.9.9")))
                .isTrue();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '"',
            value = {
                "10.0.0.0/33 | trusted proxy '10.0.0.0/33': prefix length 33 is out of range for IPv4 (0..32). Use a CIDR such as '10.0.0.0/8'.",
                "10.0.0.0/99999 | trusted proxy '10.0.0.0/99999': prefix length 99999 is out of range for IPv4 (0..32). Use a CIDR such as '10.0.0.0/8'.",
                "fd00::/129 | trusted proxy 'fd00::/129': prefix length 129 is out of range for IPv6 (0..128). Use a CIDR such as 'fd00::/8'.",
                "10.0.0.0/x | trusted proxy '10.0.0.0/x': prefix length 'x' is not a decimal number. Use a CIDR such as '10.0.0.0/8'.",
                "10.0.0.0/ | trusted proxy '10.0.0.0/': prefix length '' is not a decimal number. Use a CIDR such as '10.0.0.0/8'.",
                "10.0.0.0/-1 | trusted proxy '10.0.0.0/-1': prefix length '-1' is not a decimal number. Use a CIDR such as '10.0.0.0/8'.",
                "10.0.0.0/8/9 | trusted proxy '10.0.0.0/8/9': prefix length '8/9' is not a decimal number. Use a CIDR such as '10.0.0.0/8'.",
                "10.0.0.0/ 8 | trusted proxy '10.0.0.0/ 8': prefix length ' 8' is not a decimal number. Use a CIDR such as '10.0.0.0/8'.",
                "fd00::/1a | trusted proxy 'fd00::/1a': prefix length '1a' is not a decimal number. Use a CIDR such as 'fd00::/8'.",
                "10.0.0.1/8 | trusted proxy '10.0.0.1/8': address 10.0.0.1 has host bits set beyond the /8 prefix. Use the network address '10.0.0.0/8'.",
                "192.168.1.77/24 | trusted proxy '192.168.1.77/24': address 192.168.1.77 has host bits set beyond the /24 prefix. Use the network address '192.168.1.0/24'.",
                "2001:db8::1/32 | trusted proxy '2001:db8::1/32': address 2001:db8::1 has host bits set beyond the /32 prefix. Use the network address '2001:db8::/32'.",
                "::ffff:10.0.0.1/104 | trusted proxy '::ffff:10.0.0.1/104': address ::ffff:10.0.0.1 has host bits set beyond the /104 prefix. Use the network address '::ffff:10.0.0.0/104'.",
                "proxy.example.com | trusted proxy 'proxy.example.com': 'proxy.example.com' is not an IPv4 or IPv6 address literal (host names are never resolved). Use a CIDR such as '10.0.0.0/8' or a single address such as '127.0.0.1'.",
                "localhost/8 | trusted proxy 'localhost/8': 'localhost' is not an IPv4 or IPv6 address literal (host names are never resolved). Use a CIDR such as '10.0.0.0/8' or a single address such as '127.0.0.1'.",
                "10.0.0.0.0/8 | trusted proxy '10.0.0.0.0/8': '10.0.0.0.0' is not an IPv4 or IPv6 address literal (host names are never resolved). Use a CIDR such as '10.0.0.0/8' or a single address such as '127.0.0.1'.",
                "010.0.0.0/8 | trusted proxy '010.0.0.0/8': '010.0.0.0' is not an IPv4 or IPv6 address literal (host names are never resolved). Use a CIDR such as '10.0.0.0/8' or a single address such as '127.0.0.1'.",
                "[::1] | trusted proxy '[::1]': '[::1]' is not an IPv4 or IPv6 address literal (host names are never resolved). Use a CIDR such as '10.0.0.0/8' or a single address such as '127.0.0.1'.",
                "/8 | trusted proxy '/8': '' is not an IPv4 or IPv6 address literal (host names are never resolved). Use a CIDR such as '10.0.0.0/8' or a single address such as '127.0.0.1'.",
                "fe80::1%eth0 | trusted proxy 'fe80::1%eth0': zone ids such as '%eth0' are not supported. Remove the zone id, as in 'fe80::1'.",
                "fe80::%eth0/64 | trusted proxy 'fe80::%eth0/64': zone ids such as '%eth0' are not supported. Remove the zone id, as in 'fe80::/64'.",
                "\"\" | trusted proxy '': value is blank. Use a CIDR such as '10.0.0.0/8' or a single address such as '127.0.0.1'.",
                "\"   \" | trusted proxy '   ': value is blank. Use a CIDR such as '10.0.0.0/8' or a single address such as '127.0.0.1'.",
            })
    void rejectsInvalidEntryWithExactMessage(String spec, String message) {
        assertThatThrownBy(() -> IpRange.parse(spec))
                .isExactlyInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage(message);
    }

    @Test
    void rejectsNullEntryWithExactMessage() {
        assertThatThrownBy(() -> IpRange.parse(null))
                .isExactlyInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage("trusted proxy must not be null. Use a CIDR such as '10.0.0.0/8' or a"
                        + " single address such as '127.0.0.1'.");
    }
}
