package io.github.ratelimit.samples.servlet;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Lets the container authenticate (its {@code <login-config>}: HTTP Basic, checked by its realm) when the
 * application asks, with {@link HttpServletRequest#authenticate}, instead of before every filter as a
 * {@code <security-constraint>} makes it: the rate-limit filter declared before this one then limits password
 * guessing. Like Spring Security's HTTP Basic, it checks the credentials a request sends on any path, and the
 * {@code protected-paths} also need them and the {@code role}: each an exact path within the application
 * ({@code /me}), or a path ending in {@code /*} for everything under it ({@code /ratelimit-admin/*}). Declare the
 * filter once per role (web.xml declares it for {@code user} and for {@code ratelimit-admin}).
 */
public class ContainerAuthenticationFilter implements Filter {

    private Set<String> protectedPaths = Set.of();
    private String role;

    @Override
    public void init(FilterConfig config) throws ServletException {
        String paths = config.getInitParameter("protected-paths");
        protectedPaths = paths == null
                ? Set.of()
                : Arrays.stream(paths.split(","))
                        .map(String::trim)
                        .filter(p -> !p.isEmpty())
                        .collect(Collectors.toUnmodifiableSet());
        role = config.getInitParameter("role");
        if (!protectedPaths.isEmpty() && (role == null || role.isBlank())) {
            throw new ServletException("filter '" + config.getFilterName() + "': init-param role is missing. Name the "
                    + "role the protected-paths " + protectedPaths + " need, e.g. user.");
        }
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        HttpServletResponse response = (HttpServletResponse) res;
        String path = request.getServletPath() + (request.getPathInfo() == null ? "" : request.getPathInfo());
        boolean needsUser = protectedPaths.stream()
                .anyMatch(p -> p.endsWith("/*")
                        ? path.equals(p.substring(0, p.length() - 2)) || path.startsWith(p.substring(0, p.length() - 1))
                        : path.equals(p));
        if ((request.getHeader("Authorization") != null || needsUser) && !request.authenticate(response)) {
            return; // the container answered 401 and asked for credentials
        }
        if (needsUser && !request.isUserInRole(role)) {
            response.sendError(HttpServletResponse.SC_FORBIDDEN);
            return;
        }
        chain.doFilter(request, response);
    }
}
