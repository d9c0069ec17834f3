/** The web.xml sample: the plain servlet filter with a rules file, container authentication between its two phases. See the README for how to run it. */
package io.github.ratelimit.samples.servlet;
