package io.github.ratelimit.samples.servlet;

import io.github.ratelimit.RateLimit;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/** Limited by its annotation: 5 per second and 100 per minute per client address. */
public class HelloServlet extends HttpServlet {

    @Override
    @RateLimit(name = "hello", key = "ip", perSecond = 5, perMinute = 100)
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setContentType("text/plain");
        response.getWriter().println("hello");
    }
}
