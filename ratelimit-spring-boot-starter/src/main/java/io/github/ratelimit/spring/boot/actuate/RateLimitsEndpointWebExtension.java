package io.github.ratelimit.spring.boot.actuate;

import java.util.Map;
import java.util.Set;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

/**
 * The {@code ratelimits} endpoint over HTTP: shows keys only to the callers
 * {@code management.endpoint.ratelimits.show-values} and {@code roles} allow.
 */
@EndpointWebExtension(endpoint = RateLimitsEndpoint.class)
public class RateLimitsEndpointWebExtension {

    private final RateLimitsEndpoint delegate;
    private final Show showValues;
    private final Set<String> roles;

    public RateLimitsEndpointWebExtension(RateLimitsEndpoint delegate, Show showValues, Set<String> roles) {
        this.delegate = delegate;
        this.showValues = showValues;
        this.roles = Set.copyOf(roles);
    }

    /**
     * @param securityContext the caller
     * @return rules, store and the most-rejected keys, masked unless the caller may see them
     */
    @ReadOperation
    public Map<String, Object> rateLimits(SecurityContext securityContext) {
        return delegate.rateLimits(showValues.isShown(securityContext, roles));
    }
}
