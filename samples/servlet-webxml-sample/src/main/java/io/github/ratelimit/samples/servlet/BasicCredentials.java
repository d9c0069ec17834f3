package io.github.ratelimit.samples.servlet;

import io.github.ratelimit.RequestContext;
import io.github.ratelimit.key.KeyResolver;

/**
 * The key {@code basic-credentials} (registered in the rules file): {@code basic} for a request that sends HTTP
 * Basic credentials, which {@link ContainerAuthenticationFilter} has the container check on any path; none for
 * others. Rule {@code login-failures-by-address} counts by {@code ip+basic-credentials} and skips requests without a
 * key, so requests that send no password cost it nothing and are never held up by it.
 */
public class BasicCredentials implements KeyResolver {

    @Override
    public String resolve(RequestContext request) {
        String authorization = request.header("Authorization");
        // Any header that starts with "Basic": Spring Security's servlet converter reads "BasicX<credentials>" too.
        return authorization != null && authorization.strip().regionMatches(true, 0, "Basic", 0, 5) ? "basic" : null;
    }
}
