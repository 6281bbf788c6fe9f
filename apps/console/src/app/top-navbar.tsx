import { useState } from 'react';
import Container from 'react-bootstrap/Container';
import Nav from 'react-bootstrap/Nav';
import NavDropdown from 'react-bootstrap/NavDropdown';
import Navbar from 'react-bootstrap/Navbar';
import { useTranslation } from 'react-i18next';
import { Link, useLocation, useNavigate } from 'react-router';
import { PRODUCT_NAME } from '@ukiyo/contract';
import { Icon } from '@/components/icons.tsx';
import { LanguageSwitch } from '@/components/language-switch.tsx';
import { callApi } from '@/lib/api-client.ts';
import { SERVICE_SITE_URL } from '@/lib/config.ts';
import { queryClient } from '@/lib/query-client.ts';
import { clearSession, useSession } from '@/lib/session.ts';
import { useExternalStatusUrl } from '@/features/status/api/status-link.ts';
import { buildNavigation, type MenuEntry, type MenuLink, type Navigation } from './navigation.ts';
import { useCurrentRouteID } from './route-title.ts';
import { paths, type RouteID } from './paths.ts';

const isActive = (entry: MenuLink, current: RouteID) => entry.activeFor.includes(current);

/** A page's link inside a dropdown: a group's child or an item of the account menu. */
function DropdownLink({ link, current }: { link: MenuLink; current: RouteID }) {
  const { t } = useTranslation();
  return (
    <NavDropdown.Item as={Link} to={link.to} active={isActive(link, current)} data-testid={`nav-${link.id}`}>
      {t(link.labelKey)}
    </NavDropdown.Item>
  );
}

function MenuItem({ entry, current }: { entry: MenuEntry; current: RouteID }) {
  const { t } = useTranslation();
  switch (entry.kind) {
    case 'link':
      return (
        <Nav.Link
          as={Link}
          to={entry.to}
          active={isActive(entry, current)}
          aria-current={isActive(entry, current) ? 'page' : undefined}
          data-testid={`nav-${entry.id}`}
        >
          {t(entry.labelKey)}
        </Nav.Link>
      );
    case 'external':
      return (
        <Nav.Link href={entry.href} target="_blank" rel="noopener noreferrer" data-testid={`nav-${entry.id}`}>
          {t(entry.labelKey)}
          <Icon name="external" className="ms-1 small" />
        </Nav.Link>
      );
    case 'group':
      return (
        <NavDropdown
          id={`nav-${entry.id}`}
          data-testid={`nav-${entry.id}`}
          title={t(entry.labelKey)}
          active={entry.children.some((child) => isActive(child, current))}
        >
          {entry.children.map((child) => (
            <DropdownLink key={child.id} link={child} current={current} />
          ))}
        </NavDropdown>
      );
  }
}

function accountTitle(account: NonNullable<Navigation['account']>): string {
  if (account.memberCode && account.serviceCode) return `${account.memberCode} (${account.serviceCode})`;
  return account.memberCode || account.emailAddress;
}

function AccountMenu({
  account,
  current,
}: {
  account: NonNullable<Navigation['account']>;
  current: RouteID;
}) {
  const { t } = useTranslation();
  const navigate = useNavigate();

  const logout = async () => {
    // Logging out always succeeds for the user: a failed call still ends the session here.
    await callApi('auth.logout', {}).catch(() => undefined);
    clearSession();
    queryClient.clear();
    await navigate(paths.login());
  };

  return (
    <NavDropdown
      id="user-menu"
      data-testid="user-menu"
      align="end"
      title={
        <>
          <Icon name="person" className="me-1" />
          {accountTitle(account)}
        </>
      }
    >
      <NavDropdown.ItemText className="small text-body-secondary" data-testid="user-email">
        {account.emailAddress}
      </NavDropdown.ItemText>
      <NavDropdown.Divider />
      {account.items.map((item) => (
        <DropdownLink key={item.id} link={item} current={current} />
      ))}
      {account.items.length > 0 && <NavDropdown.Divider />}
      <NavDropdown.Item as="button" onClick={() => void logout()} data-testid="nav-logout">
        {t('nav.logout')}
      </NavDropdown.Item>
    </NavDropdown>
  );
}

export function TopNavbar() {
  const { t } = useTranslation();
  const session = useSession();
  const current = useCurrentRouteID();
  const { key } = useLocation();
  // Open for one location only: any route change closes the collapsed menu again.
  const [openAt, setOpenAt] = useState<string | null>(null);
  const statusUrl = useExternalStatusUrl();
  const navigation = buildNavigation(session, SERVICE_SITE_URL, statusUrl);

  return (
    <Navbar
      expand="xl"
      bg="dark"
      data-bs-theme="dark"
      className="app-navbar shadow-sm"
      expanded={openAt === key}
      onToggle={(open) => setOpenAt(open ? key : null)}
      aria-label={t('nav.label')}
    >
      <Container fluid className="px-4">
        <Navbar.Brand as={Link} to={paths.home()} className="fw-semibold" data-testid="nav-brand">
          <span className="brand-mark" aria-hidden="true" />
          {PRODUCT_NAME}
        </Navbar.Brand>
        <Navbar.Toggle
          aria-controls="main-navigation"
          aria-label={t('nav.toggle')}
          data-testid="navbar-toggler"
        />
        <Navbar.Collapse id="main-navigation">
          <Nav className="me-auto" data-testid="nav-main">
            {navigation.main.map((entry) => (
              <MenuItem key={entry.id} entry={entry} current={current} />
            ))}
          </Nav>
          <Nav className="align-items-xl-center" data-testid="nav-right">
            {navigation.right.map((entry) => (
              <MenuItem key={entry.id} entry={entry} current={current} />
            ))}
            <LanguageSwitch />
            {navigation.account && <AccountMenu account={navigation.account} current={current} />}
          </Nav>
        </Navbar.Collapse>
      </Container>
    </Navbar>
  );
}
