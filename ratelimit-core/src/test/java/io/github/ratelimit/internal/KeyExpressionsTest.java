package io.github.ratelimit.internal;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.key.KeyResolver;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KeyExpressionsTest {

    private static final Map<String, KeyResolver> CUSTOM = Map.of("tenant", c -> c.header("X-Tenant"));

    private static String resolve(String expression, RequestContext context) {
        return KeyExpressions.compile(expression, CUSTOM, ClientIpResolver.direct(), "test").resolve(context);
    }

    private final RequestContext full = RequestContext.builder().remoteAddress("203.0.113.7").principal("alice")
            .header("X-Api-Key", "k-1").header("X-Tenant", "acme").build();

    @Test
    void resolvesTheBuiltIns() {
        assertThat(resolve("global", RequestContext.empty())).isEqualTo("*");
        assertThat(resolve("ip", full)).isEqualTo("203.0.113.7");
        assertThat(resolve("user", full)).isEqualTo("alice");
        assertThat(resolve("header:X-Api-Key", full)).isEqualTo("k-1");
        assertThat(resolve("header:x-api-key", full)).isEqualTo("k-1");
        assertThat(resolve("tenant", full)).isEqualTo("acme");
    }

    @Test
    void combinesPartsAndEscapesThemSoOneValueCannotPoseAsTwo() {
        assertThat(resolve("user+tenant", full)).isEqualTo("alice+acme");
        RequestContext sneaky = RequestContext.builder().principal("alice+acme").header("X-Tenant", "x").build();
        assertThat(resolve("user+tenant", sneaky)).isEqualTo("alice\\+acme+x");
        assertThat(resolve("user+tenant", RequestContext.builder().principal("alice").build())).isNull();
    }

    @Test
    void takesTheFirstAlternativeThatResolves() {
        assertThat(resolve("user|ip", full)).isEqualTo("alice");
        assertThat(resolve("user|ip", RequestContext.builder().remoteAddress("198.51.100.1").build())).isEqualTo("198.51.100.1");
        assertThat(resolve("user|header:X-None", RequestContext.empty())).isNull();
    }

    @Test
    void ignoresForwardingHeadersUnlessAProxyIsTrusted() {
        RequestContext spoofed = RequestContext.builder().remoteAddress("203.0.113.7")
                .header("X-Forwarded-For", "198.51.100.1").build();
        assertThat(resolve("ip", spoofed)).isEqualTo("203.0.113.7");
        KeyResolver behindProxy = KeyExpressions.compile("ip", CUSTOM,
                ClientIpResolver.builder().trustedProxies("203.0.113.7").build(), "test");
        assertThat(behindProxy.resolve(spoofed)).isEqualTo("198.51.100.1");
        assertThat(ClientIpResolver.direct().readsForwardedHeader()).isFalse();
    }

    @Test
    void treatsBlankValuesAsMissing() {
        assertThat(resolve("header:X-Api-Key", RequestContext.builder().header("X-Api-Key", "  ").build())).isNull();
        assertThat(resolve("user", RequestContext.builder().principal("").build())).isNull();
    }

    @Test
    void rejectsUnknownAtomsNamingTheAvailableOnes() {
        assertThatThrownBy(() -> KeyExpressions.compile("user|usr", CUSTOM, ClientIpResolver.direct(), "ratelimit.rules[0]"))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage("ratelimit.rules[0]: unknown key 'usr' in key expression 'user|usr'. Available: "
                        + "[global, header:<name>, ip, tenant, user]. Register custom keys with a KeyResolver.");
        assertThatThrownBy(() -> KeyExpressions.compile("user+", CUSTOM, ClientIpResolver.direct(), "here"))
                .hasMessageStartingWith("here: an empty key part in key expression 'user+'.");
        assertThatThrownBy(() -> KeyExpressions.compile("header:", CUSTOM, ClientIpResolver.direct(), "here"))
                .hasMessage("here: key 'header:' names header '', which is not a valid header name. Write "
                        + "'header:<Name>', e.g. 'header:X-Api-Key'.");
        assertThatThrownBy(() -> KeyExpressions.compile("header:X Y", CUSTOM, ClientIpResolver.direct(), "here"))
                .hasMessageContaining("names header 'X Y', which is not a valid header name");
    }
}
