package io.github.ratelimit.benchmarks.http;

import java.util.List;
import java.util.Locale;

/** A line chart in SVG, written by hand: requests per second against connections, one line per store and endpoint. */
final class Chart {

    /** The value to plot. */
    interface Values {
        double of(String app, String endpoint, int connections);
    }

    private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
    private static final String[] DASHES = {"", "8,2,2,2", "6,3", "2,3"};

    private Chart() {}

    static String svg(
            List<String> apps, List<String> labels, List<String> endpoints, int[] connections, Values values) {
        int width = 760;
        int height = 420;
        int left = 70;
        int right = 250;
        int top = 30;
        int bottom = 50;
        double max = 0;
        for (String app : apps) {
            for (String endpoint : endpoints) {
                for (int c : connections) {
                    double v = values.of(app, endpoint, c);
                    if (!Double.isNaN(v)) {
                        max = Math.max(max, v);
                    }
                }
            }
        }
        double yMax = niceCeiling(max);
        int plotW = width - left - right;
        int plotH = height - top - bottom;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                        + "font-family=\"sans-serif\" font-size=\"12\">%n",
                width,
                height));
        svg.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        svg.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"18\" font-size=\"14\">Requests/s against connections "
                        + "(medians; limits never reached)</text>%n",
                left));
        for (int i = 0; i <= 5; i++) {
            double v = yMax * i / 5;
            double y = top + plotH - plotH * i / 5.0;
            svg.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>%n",
                    left,
                    y,
                    left + plotW,
                    y));
            svg.append(String.format(
                    Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%,.0f</text>%n", left - 6, y + 4, v));
        }
        for (int i = 0; i < connections.length; i++) {
            double x = x(i, connections.length, left, plotW);
            svg.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>%n",
                    x,
                    top + plotH + 18,
                    connections[i]));
        }
        svg.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">connections</text>%n",
                left + plotW / 2,
                height - 10));
        int legend = 0;
        for (int a = 0; a < apps.size(); a++) {
            for (int e = 0; e < endpoints.size(); e++) {
                if (Double.isNaN(values.of(apps.get(a), endpoints.get(e), connections[0]))) {
                    continue; // not measured on this application
                }
                StringBuilder points = new StringBuilder();
                for (int i = 0; i < connections.length; i++) {
                    double v = values.of(apps.get(a), endpoints.get(e), connections[i]);
                    points.append(String.format(
                            Locale.ROOT,
                            "%.1f,%.1f ",
                            x(i, connections.length, left, plotW),
                            top + plotH - plotH * v / yMax));
                }
                String dash = DASHES[e % DASHES.length].isEmpty()
                        ? ""
                        : " stroke-dasharray=\"" + DASHES[e % DASHES.length] + "\"";
                svg.append(String.format(
                        Locale.ROOT,
                        "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s " + "points=\"%s\"/>%n",
                        COLORS[a % COLORS.length],
                        dash,
                        points.toString().trim()));
                int ly = top + 10 + legend * 20;
                svg.append(String.format(
                        Locale.ROOT,
                        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" " + "stroke-width=\"2\"%s/>%n",
                        left + plotW + 15,
                        ly,
                        left + plotW + 45,
                        ly,
                        COLORS[a % COLORS.length],
                        dash));
                svg.append(String.format(
                        Locale.ROOT,
                        "<text x=\"%d\" y=\"%d\">%s, /%s</text>%n",
                        left + plotW + 50,
                        ly + 4,
                        escape(labels.get(a)),
                        endpoints.get(e)));
                legend++;
            }
        }
        return svg.append("</svg>\n").toString();
    }

    private static double x(int i, int n, int left, int plotW) {
        return n == 1 ? left + plotW / 2.0 : left + plotW * i / (double) (n - 1);
    }

    private static double niceCeiling(double v) {
        if (v <= 0) {
            return 1;
        }
        double magnitude = Math.pow(10, Math.floor(Math.log10(v)));
        for (double step : new double[] {1, 2, 2.5, 5, 10}) {
            if (step * magnitude >= v) {
                return step * magnitude;
            }
        }
        return 10 * magnitude;
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;");
    }
}
