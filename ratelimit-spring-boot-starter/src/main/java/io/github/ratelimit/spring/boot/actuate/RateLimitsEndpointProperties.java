package io.github.ratelimit.spring.boot.actuate;

import java.util.HashSet;
import java.util.Set;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code ratelimits} endpoint's settings, under {@code management.endpoint.ratelimits}, as Spring Boot's own
 * endpoints with sensitive values ({@code env}, {@code configprops}, {@code quartz}) have them.
 */
@ConfigurationProperties("management.endpoint.ratelimits")
public class RateLimitsEndpointProperties {

    /** When to show the keys (user names, addresses, API keys) of the most-rejected list. */
    private Show showValues = Show.NEVER;

    /** Roles that may see the keys with show-values=when-authorized; empty: every authenticated caller. */
    private Set<String> roles = new HashSet<>();

    public Show getShowValues() {
        return showValues;
    }

    public void setShowValues(Show showValues) {
        this.showValues = showValues;
    }

    public Set<String> getRoles() {
        return roles;
    }

    public void setRoles(Set<String> roles) {
        this.roles = roles;
    }
}
