package io.github.ratelimit.samples.servlet;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * Behind HTTP basic authentication ({@link ContainerAuthenticationFilter}: users with role {@code user}); limited per
 * user by the rules file ({@code ratelimit.rules[1]}), with a per-user override for {@code bob}.
 */
public class MeServlet extends HttpServlet {

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setContentType("text/plain");
        response.getWriter().println("you are " + request.getRemoteUser());
    }
}
