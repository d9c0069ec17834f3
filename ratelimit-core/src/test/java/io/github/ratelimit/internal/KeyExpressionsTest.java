package io.github.ratelimit.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.key.KeyResolver;
import java.util.Map;
import org.junit.jupiter.api.Test;

class KeyExpressionsTest {

    private static final Map<String, KeyResolver> CUSTOM = Map.of("tenant", c -> c.header("X-Tenant"));

    private static String resolve(String expression, RequestContext context) {
        return KeyExpressions.compile(expression, CUSTOM, ClientIpResolver.direct(), "test")
                .resolve(context);
    }

    private final RequestContext full = RequestContext.builder()
            .remoteAddress("203.0.113.7")
            .principal("alice")
            .header("X-Api-Key", "k-1")
            .header("X-Tenant", "acme")
            .build();

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
        RequestContext sneaky = RequestContext.builder()
                .principal("alice+acme")
                .header("X-Tenant", "x")
                .build();
        assertThat(resolve("user+tenant", sneaky)).isEqualTo("alice\\+acme+x");
        assertThat(resolve(
                        "user+tenant",
                        RequestContext.builder().principal("alice").build()))
                .isNull();
    }

    @Test
    void takesTheFirstAlternativeThatResolvesAndSaysWhichOneItWas() {
        assertThat(resolve("user|ip", full)).isEqualTo("user=alice");
        assertThat(resolve(
                        "user|ip",
                        RequestContext.builder().remoteAddress("198.51.100.1").build()))
                .isEqualTo("ip=198.51.100.1");
        assertThat(resolve(
                        "user | header:X-Tenant+ip",
                        RequestContext.builder()
                                .remoteAddress("198.51.100.1")
                                .header("X-Tenant", "acme")
                                .build()))
                .isEqualTo("header:X-Tenant+ip=acme+198.51.100.1");
        assertThat(resolve("user|header:X-None", RequestContext.empty())).isNull();
    }

    @Test
    void anAnonymousCallerCannotPoseAsAUserThroughAnotherAlternative() {
        RequestContext anonymous =
                RequestContext.builder().header("X-Tenant", "alice").build();
        RequestContext alice = RequestContext.builder().principal("alice").build();
        assertThat(resolve("user|tenant", anonymous))
                .isEqualTo("tenant=alice")
                .isNotEqualTo(resolve("user|tenant", alice));
    }

    @Test
    void fallsThroughToTheNextAlternativeWhenOneThrows() {
        KeyResolver failing = KeyExpressions.compile(
                "broken|user",
                Map.of("broken", c -> {
                    throw new IllegalStateException("resolver bug");
                }),
                ClientIpResolver.direct(),
                "test");
        assertThat(failing.resolve(RequestContext.builder().principal("alice").build()))
                .isEqualTo("user=alice");
        assertThat(failing.resolve(RequestContext.empty())).isNull();
    }

    @Test
    void reservesTheTildeForHashesAndTheSharedBucket() {
        String literal = KeyExpressions.HASH_PREFIX + "0".repeat(64);
        assertThat(resolve(
                        "header:X-Api-Key",
                        RequestContext.builder().header("X-Api-Key", literal).build()))
                .isEqualTo("\\" + literal);
        assertThat(resolve(
                        "header:X-Api-Key",
                        RequestContext.builder().header("X-Api-Key", "~missing").build()))
                .isEqualTo("\\~missing")
                .isNotEqualTo(KeyExpressions.SHARED_MISSING_KEY);
        String longValue = "k".repeat(200);
        assertThat(resolve(
                        "header:X-Api-Key",
                        RequestContext.builder().header("X-Api-Key", longValue).build()))
                .startsWith(KeyExpressions.HASH_PREFIX)
                .hasSize(KeyExpressions.HASH_PREFIX.length() + 64);
    }

    @Test
    void escapesLoneSurrogatesSoTheyCannotMeetInUtf8() {
        String a = resolve(
                "header:X-Api-Key",
                RequestContext.builder().header("X-Api-Key", "k\ud800").build());
        String b = resolve(
                "header:X-Api-Key",
                RequestContext.builder().header("X-Api-Key", "k\udbff").build());
        assertThat(a).isEqualTo("k\\ud800");
        assertThat(a.getBytes(java.nio.charset.StandardCharsets.UTF_8))
                .isNotEqualTo(b.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertThat(resolve(
                        "header:X-Api-Key",
                        RequestContext.builder()
                                .header("X-Api-Key", "\ud83d\ude00")
                                .build()))
                .isEqualTo("\ud83d\ude00");
    }

    @Test
    void readsTheUserNameABasicHeaderClaimsButNeverThePassword() {
        String header = "Basic "
                + java.util.Base64.getEncoder()
                        .encodeToString("mallory:secret:with:colons".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertThat(resolve(
                        "basic-user",
                        RequestContext.builder().header("Authorization", header).build()))
                .isEqualTo("mallory");
        assertThat(resolve(
                        "basic-user",
                        RequestContext.builder()
                                .header("Authorization", "Bearer abc")
                                .build()))
                .isNull();
        assertThat(resolve(
                        "basic-user",
                        RequestContext.builder()
                                .header("Authorization", "Basic !!!")
                                .build()))
                .isNull();
        assertThat(resolve(
                        "basic-user",
                        RequestContext.builder()
                                .header(
                                        "Authorization",
                                        "basic " + java.util.Base64.getEncoder().encodeToString(":nouser".getBytes()))
                                .build()))
                .isNull();
        assertThat(resolve(
                        "basic-user",
                        RequestContext.builder()
                                .header("Authorization", "Basic " + "A".repeat(5000))
                                .build()))
                .isNull();
    }

    @Test
    void foldsTheCaseOfClaimedUserNamesSoEverySpellingIsOneName() {
        String alice = "Basic " + java.util.Base64.getEncoder().encodeToString("ALICE:guess".getBytes());
        assertThat(resolve(
                        "basic-user",
                        RequestContext.builder().header("Authorization", alice).build()))
                .isEqualTo("alice");
        assertThat(resolve(
                        "form-user",
                        RequestContext.builder()
                                .parameter("username", " AlIcE ")
                                .build()))
                .isEqualTo("alice");
        assertThat(resolve(
                        "form-user:email",
                        RequestContext.builder()
                                .parameter("email", "Bob@Example.COM")
                                .build()))
                .isEqualTo("bob@example.com");
        assertThat(resolve(
                        "param:username",
                        RequestContext.builder().parameter("username", "AlIcE").build()))
                .as("a plain parameter keeps its case")
                .isEqualTo("AlIcE");
        assertThatThrownBy(() -> KeyExpressions.compile("form-user:", CUSTOM, ClientIpResolver.direct(), "here"))
                .hasMessageContaining("names form parameter '', which is not a valid name");
    }

    @Test
    void readsRequestParameters() {
        assertThat(resolve(
                        "param:username",
                        RequestContext.builder().parameter("username", "bob").build()))
                .isEqualTo("bob");
        assertThat(resolve("param:username", RequestContext.empty())).isNull();
        assertThatThrownBy(() -> KeyExpressions.compile("param:", CUSTOM, ClientIpResolver.direct(), "here"))
                .hasMessageContaining("names request parameter '', which is not a valid name");
    }

    @Test
    void ignoresForwardingHeadersUnlessAProxyIsTrusted() {
        RequestContext spoofed = RequestContext.builder()
                .remoteAddress("203.0.113.7")
                .header("X-Forwarded-For", "198.51.100.1")
                .build();
        assertThat(resolve("ip", spoofed)).isEqualTo("203.0.113.7");
        KeyResolver behindProxy = KeyExpressions.compile(
                "ip",
                CUSTOM,
                ClientIpResolver.builder().trustedProxies("203.0.113.7").build(),
                "test");
        assertThat(behindProxy.resolve(spoofed)).isEqualTo("198.51.100.1");
        assertThat(ClientIpResolver.direct().readsForwardedHeader()).isFalse();
    }

    @Test
    void treatsBlankValuesAsMissing() {
        assertThat(resolve(
                        "header:X-Api-Key",
                        RequestContext.builder().header("X-Api-Key", "  ").build()))
                .isNull();
        assertThat(resolve("user", RequestContext.builder().principal("").build()))
                .isNull();
    }

    @Test
    void rejectsUnknownAtomsNamingTheAvailableOnes() {
        assertThatThrownBy(() ->
                        KeyExpressions.compile("user|usr", CUSTOM, ClientIpResolver.direct(), "ratelimit.rules[0]"))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage("ratelimit.rules[0]: unknown key 'usr' in key expression 'user|usr'. Available: "
                        + "[basic-user, form-user[:<parameter>], global, header:<name>, ip, param:<name>, tenant, user]. "
                        + "Register custom keys "
                        + "with a KeyResolver.");
        assertThatThrownBy(() -> KeyExpressions.compile("user+", CUSTOM, ClientIpResolver.direct(), "here"))
                .hasMessageStartingWith("here: an empty key part in key expression 'user+'.");
        assertThatThrownBy(() -> KeyExpressions.compile("header:", CUSTOM, ClientIpResolver.direct(), "here"))
                .hasMessage("here: key 'header:' names header '', which is not a valid header name. Write "
                        + "'header:<Name>', e.g. 'header:X-Api-Key'.");
        assertThatThrownBy(() -> KeyExpressions.compile("header:X Y", CUSTOM, ClientIpResolver.direct(), "here"))
                .hasMessageContaining("names header 'X Y', which is not a valid header name");
    }
}
