package io.github.ratelimit.samples.servlet;

import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimit;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * Soft-limited: 2 reports per second; a burst waits its turn (up to 2 s) instead of being rejected. The wait
 * uses async processing, so no container thread is held meanwhile.
 */
@RateLimit(name = "reports", perSecond = 2, mode = Mode.SOFT, maxDelay = "2s")
public class ReportServlet extends HttpServlet {

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setContentType("text/plain");
        response.getWriter().println("report ready");
    }
}
